/**
 * Checkpoints of the window-aggregate state in slices (issue 12): rows without sketches as
 * columns (`window-slice-columns.ts`), rows with sketches in the JSON shape of
 * `keyed-window-slices.ts` (`{ start: { $key: acc } }` per slice), as format 2 checkpoints
 * held them before the compact state; both restore. A cursor is consistent as
 * of its opening by copy-on-write at the row level: it notes each window's row count and
 * sets a watch on it ({@link RowPreimages}), and a row changed while its window is watched,
 * and not written yet, is copied first ({@link AggregateWindow.rowForUpdate}, once per row). Rows added later are not
 * part of the checkpoint; a window closed meanwhile stays reachable through the cursor.
 */
import type { AggregateWindow, RowLayout } from "./aggregate-window.ts";
import { closedThroughField, closedThroughOf } from "../closing/closed-through.ts";
import { addWindows, isWindowStart } from "./aggregate-windows.ts";
import { checkedWindowSlice, windowsFromHead } from "./keyed-window-slices.ts";
import type { SliceCursor, StateSlicing } from "./state-slices.ts";
import { RowPreimages } from "./row-preimages.ts";
import { rowText } from "./window-row-json.ts";
import { addColumnSlice, hasColumnSlices, isColumnSlice, rowColumnsText, windowColumnsText } from "./window-slice-columns.ts";
import type { Accumulator, WindowAggregateState } from "./window-aggregate-state.ts";

/** Slicing of the window-aggregate state; `isAccumulator` checks one restored accumulator. */
export function aggregateWindowSlicing(layout: RowLayout, isAccumulator: (acc: Record<string, unknown>) => boolean): StateSlicing<WindowAggregateState> {
  return {
    split: (state, perSlice) => {
      const cursor = new RowsCursor(state, perSlice, false, layout);
      const slices: string[] = [];
      for (let slice = cursor.next(); slice !== null; slice = cursor.next()) slices.push(slice);
      return { head: cursor.head, slices };
    },
    fromHead,
    addSlice: (state, slice) => {
      if (isColumnSlice(slice)) addColumnSlice(state, slice, layout);
      else addWindows(state, checkedWindowSlice<Accumulator>(slice, isAccumulator, isWindowStart), layout);
    },
    cursor: (state, perSlice) => {
      state.cursor?.close();
      const cursor = new RowsCursor(state, perSlice, true, layout);
      state.cursor = cursor;
      return cursor;
    },
  };
}

/** The state a checkpoint head describes (the head of `keyed-window-slices.ts`), with no window open. */
function fromHead(head: unknown): WindowAggregateState {
  const { maxTimeMs, lateRecords } = windowsFromHead(head);
  return { maxTimeMs, lateRecords, open: {}, cursor: null, closedThrough: closedThroughOf(head as Record<string, unknown>) };
}

interface WindowAtOpening {
  start: string;
  window: AggregateWindow;
  /** Rows at the opening. */
  count: number;
  /** The watch this cursor set on the window (null: not watching). */
  watch: RowPreimages | null;
}

/** Writes the windows as of the opening, `perSlice` rows per slice; `watching`: keeps preimages of rows changed meanwhile. */
class RowsCursor implements SliceCursor {
  readonly head: unknown;
  readonly slices: number;
  readonly #state: WindowAggregateState;
  readonly #perSlice: number;
  readonly #columns: boolean;
  readonly #windows: WindowAtOpening[] = [];
  #at = 0;
  #row = 0;
  #closed = false;

  constructor(state: WindowAggregateState, perSlice: number, watching: boolean, layout: RowLayout) {
    this.#state = state;
    this.#perSlice = Math.max(1, perSlice);
    this.#columns = hasColumnSlices(layout);
    this.head = { maxTimeMs: state.maxTimeMs, lateRecords: state.lateRecords, ...closedThroughField(state.closedThrough) };
    let total = 0;
    for (const start of Object.keys(state.open)) {
      const window = state.open[start] as AggregateWindow;
      const watch = watching ? new RowPreimages(window.size) : null;
      if (watch) window.watch = watch;
      this.#windows.push({ start, window, count: window.size, watch });
      total += window.size;
    }
    this.slices = Math.ceil(total / this.#perSlice);
  }

  next(): string | null {
    if (this.#closed) throw new Error("checkpoint cursor: closed");
    const parts: string[] = [];
    let taken = 0;
    while (taken < this.#perSlice && this.#at < this.#windows.length) {
      const at = this.#windows[this.#at] as WindowAtOpening;
      const from = this.#row;
      this.#row = Math.min(at.count, from + this.#perSlice - taken);
      taken += this.#row - from;
      if (this.#row > from) parts.push(this.#columns ? columnsText(at, from, this.#row) : accumulatorsText(at, from, this.#row));
      if (at.watch) at.watch.written = this.#row;
      if (this.#row < at.count) break;
      // Written whole: nothing of this window as of the opening is needed any more.
      unwatch(at);
      this.#at += 1;
      this.#row = 0;
    }
    if (taken === 0) return null;
    return this.#columns ? `[${parts.join(",")}]` : `{${parts.join(",")}}`;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (let i = this.#at; i < this.#windows.length; i++) unwatch(this.#windows[i] as WindowAtOpening);
    if (this.#state.cursor === this) this.#state.cursor = null;
  }
}

/** Rows `from..to-1` of a window as of the opening, as a window of a column slice. */
function columnsText({ start, window, watch }: WindowAtOpening, from: number, to: number): string {
  const { stride } = window.layout;
  const keys: string[] = [];
  const values: string[] = [];
  for (let row = from; row < to; row++) {
    keys.push(JSON.stringify(window.keys[row] as string));
    const saved = watch?.savedBlock(row) ?? null;
    values.push(saved === null ? rowColumnsText(stride, window.values, row * stride) : rowColumnsText(stride, saved, (watch as RowPreimages).savedAt(row, stride)));
  }
  return windowColumnsText(start, stride, keys.join(","), values.join(","));
}

/** Rows `from..to-1` of a window as of the opening, as `"start":{"$key":acc,…}` of an accumulator slice. */
function accumulatorsText({ start, window, watch }: WindowAtOpening, from: number, to: number): string {
  const entries: string[] = [];
  for (let row = from; row < to; row++) entries.push(`${JSON.stringify(`$${window.keys[row] as string}`)}:${watch?.textOf(window, row) ?? rowText(window, row)}`);
  return `${JSON.stringify(start)}:{${entries.join(",")}}`;
}

/** Ends this cursor's watch of a window (a later cursor's stays). */
function unwatch(at: WindowAtOpening): void {
  if (at.watch && at.window.watch === at.watch) at.window.watch = null;
  at.watch = null;
}
