/**
 * Moving keys of the window-aggregate operator between partitions (issue 28: a key group
 * moves from one replica pair to another while the dataflow runs). The source takes the
 * keys' open rows out as the JSON accumulators checkpoints hold; the target adopts them.
 *
 * Event time and lateness are per partition, so a move must not let the target reopen a
 * window the source already closed (its result would be emitted twice). Adopting raises
 * the target's event time to the source's when the source's is later: every window the
 * source closed is then closed at the target too, and a taken window already due at the
 * target closes at once. A window already due at the source (its close may be spread over
 * several steps) is never taken: it closes where it is, so a move never splits a close.
 */
import { AggregateWindow, type RowLayout } from "./aggregate-window.ts";
import { windowAt, isWindowStart } from "./aggregate-windows.ts";
import { keepRuns } from "../closing/sorted-runs.ts";
import { isKeyedWindows } from "./keyed-windows.ts";
import { rowValue, setRow } from "./window-row-json.ts";
import type { KeyMoves } from "./operator.ts";
import type { WindowResult } from "../wire/window-result.ts";
import type { Accumulator, WindowAggregateState } from "./window-aggregate-state.ts";

/** What a move carries: the source's event time and the taken keys' rows by window start and `$`-prefixed key. */
interface TakenRows {
  maxTimeMs: number | null;
  lateRecords: 0;
  open: Record<string, Record<string, Accumulator>>;
}

/** Turns a key's row into its result (`window-aggregate.ts`'s `toResult`). */
type RowToResult = (key: string, startMs: number, window: AggregateWindow, row: number, closed: boolean) => WindowResult;

/** Key moves for windows of `sizeMs` with `latenessMs` of allowed lateness. */
export function aggregateWindowMoves(
  layout: RowLayout,
  sizeMs: number,
  latenessMs: number,
  isAccumulator: (acc: Record<string, unknown>) => boolean,
  toResult: RowToResult,
): KeyMoves<WindowAggregateState> {
  const dueAt = (state: { maxTimeMs: number | null }, start: number): boolean => state.maxTimeMs !== null && start + sizeMs <= state.maxTimeMs - latenessMs;
  return {
    take(state, belongs) {
      const taken: TakenRows = { maxTimeMs: state.maxTimeMs, lateRecords: 0, open: {} };
      const open: Record<string, AggregateWindow> = {};
      for (const start of Object.keys(state.open)) {
        const window = state.open[start] as AggregateWindow;
        const rows = dueAt(state, Number(start)) ? [] : window.keys.flatMap((key, row) => (belongs(key) ? [row] : []));
        if (rows.length === 0) {
          open[start] = window;
          continue;
        }
        const byKey: Record<string, Accumulator> = (taken.open[start] = {});
        for (const row of rows) byKey[`$${window.keys[row] as string}`] = rowValue(window, row);
        if (rows.length < window.size) open[start] = without(window, new Set(rows));
      }
      // A new state object: a checkpoint cursor open over the old one is aborted, not misled.
      return { state: { ...state, open, cursor: null, dueLeft: null }, taken };
    },

    adopt(state, value, out) {
      const taken = takenRows(value, isAccumulator);
      if (taken.maxTimeMs !== null && (state.maxTimeMs === null || taken.maxTimeMs > state.maxTimeMs)) state.maxTimeMs = taken.maxTimeMs;
      state.dueLeft = null;
      for (const start of Object.keys(taken.open)) {
        const byKey = taken.open[start] as Record<string, Accumulator>;
        const slots = Object.keys(byKey).sort();
        const due = dueAt(state, Number(start));
        // A due window gets its adopted keys' results now: its own close may be under way past them.
        const window = due ? new AggregateWindow(layout) : windowAt(state, start, layout);
        for (const slot of slots) {
          const key = slot.slice(1);
          if (window.index.has(key)) throw new Error(`window aggregate: adopted key ${JSON.stringify(key)} is already held in window ${start}`);
          const row = window.add(key);
          setRow(window, row, byKey[slot] as Accumulator);
          if (due) out(toResult(key, Number(start), window, row, true));
        }
        if (!due) keepRuns(window, window.keys);
      }
      return state;
    },
  };
}

/** A copy of `window` without the rows in `drop`, the others in their order. */
function without(window: AggregateWindow, drop: ReadonlySet<number>): AggregateWindow {
  const copy = new AggregateWindow(window.layout);
  const { stride, sketches, summaries } = window.layout;
  window.keys.forEach((key, row) => {
    if (drop.has(row)) return;
    const to = copy.add(key);
    copy.values.set(window.values.subarray(row * stride, (row + 1) * stride), to * stride);
    for (let j = 0; j < sketches; j++) copy.hll.push(window.hll[row * sketches + j] as AggregateWindow["hll"][number]);
    for (let j = 0; j < summaries; j++) copy.top.push(window.top[row * summaries + j] as AggregateWindow["top"][number]);
  });
  keepRuns(copy, copy.keys);
  return copy;
}

/** Checks what a move carries. @throws Error when it is not what `take` gives. */
function takenRows(value: unknown, isAccumulator: (acc: Record<string, unknown>) => boolean): TakenRows {
  if (!isKeyedWindows<Accumulator>(value, isAccumulator)) throw new Error("window aggregate: malformed moved state");
  for (const [start, byKey] of Object.entries(value.open)) {
    if (!isWindowStart(start) || !Object.keys(byKey).every((slot) => slot.startsWith("$"))) throw new Error("window aggregate: malformed moved state");
  }
  return { maxTimeMs: value.maxTimeMs, lateRecords: 0, open: value.open };
}

