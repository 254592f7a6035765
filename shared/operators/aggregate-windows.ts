/**
 * Open windows of the window-aggregate operator ({@link WindowAggregateState}): closing
 * them as event time advances, serving them to queries, and converting to and from the
 * JSON shape checkpoints hold (`{ maxTimeMs, lateRecords, open: { start: { $key: acc } } }`,
 * unchanged by the compact state, so checkpoints of earlier deploys restore as they are).
 */
import { isAfter, type WindowResult } from "../wire/window-result.ts";
import { AggregateWindow, type RowLayout } from "./aggregate-window.ts";
import { closedThroughField, closedThroughOf } from "../closing/closed-through.ts";
import { keepRuns, nextKeys } from "../closing/sorted-runs.ts";
import { isKeyedWindows } from "./keyed-windows.ts";
import type { Emit, ResultFilter } from "./operator.ts";
import { firstAfter } from "../sorted.ts";
import { rowValue, setRow } from "./window-row-json.ts";
import type { Accumulator, WindowAggregateState } from "./window-aggregate-state.ts";

/** A key's result from its row, or null when it has nothing to report. */
export type RowResult = (key: string, startMs: number, window: AggregateWindow, row: number, closed: boolean) => WindowResult | null;

/** The window at `start`, created if it is not open. */
export function windowAt(state: WindowAggregateState, start: number | string, layout: RowLayout): AggregateWindow {
  let window = state.open[start];
  if (!window) state.open[start] = window = new AggregateWindow(layout);
  return window;
}

/** Open window starts in ascending order. */
const startsOf = (state: WindowAggregateState): number[] =>
  Object.keys(state.open)
    .map(Number)
    .sort((a, b) => a - b);

/** Whether a window of `sizeMs` is due (ends at or before the watermark) yet still open: a close held back by a limit. */
export function hasDue(state: WindowAggregateState, sizeMs: number, latenessMs: number): boolean {
  if (typeof state.dueLeft === "boolean") return state.dueLeft;
  if (state.maxTimeMs === null) return false;
  const watermarkMs = state.maxTimeMs - latenessMs;
  for (const start in state.open) if (Number(start) + sizeMs <= watermarkMs) return (state.dueLeft = true);
  return (state.dueLeft = false);
}

/**
 * Raises event time to `timeMs` (never lowers it), then emits, in (start, key) order, the
 * results of the windows of `sizeMs` that end at or before the watermark `timeMs -
 * latenessMs`, going on after `state.closedThrough`, at most `limit` of them (issue 12: a
 * large window closes over several log entries, the same results in the same order).
 * Each window is dropped once all its results are out (a checkpoint cursor that still has
 * to write one keeps it). Records for a due window are late whether or not its results are
 * all out yet, since the watermark has passed it.
 */
export function closeDue(state: WindowAggregateState, timeMs: number, sizeMs: number, latenessMs: number, toResult: RowResult, out: Emit<WindowResult>, limit = Number.POSITIVE_INFINITY): void {
  if (state.maxTimeMs === null || timeMs > state.maxTimeMs) state.maxTimeMs = timeMs;
  else if (!hasDue(state, sizeMs, latenessMs)) return;
  const watermarkMs = state.maxTimeMs - latenessMs;
  let left = limit;
  for (const start of startsOf(state).filter((s) => s + sizeMs <= watermarkMs)) {
    if (left <= 0) {
      state.dueLeft = true;
      return;
    }
    const window = state.open[start] as AggregateWindow;
    const through = state.closedThrough;
    const next = nextKeys(window, window.keys, through?.windowStartMs === start ? through.key : null, left);
    for (const key of next.keys) {
      const result = toResult(key, start, window, window.index.get(key) as number, true);
      if (result) out(result);
    }
    left -= next.keys.length;
    const last = next.keys[next.keys.length - 1];
    if (next.more) {
      if (last !== undefined) state.closedThrough = { windowStartMs: start, key: last };
      state.dueLeft = true;
      return;
    }
    delete state.open[start];
    state.closedThrough = null;
  }
  // Every due window is closed: none is due again before event time advances.
  state.dueLeft = false;
}

/** The index in `keys` (window `start`'s, in key order) of its first key not closed yet. */
function firstOpen(state: WindowAggregateState, start: number, keys: readonly string[]): number {
  const through = state.closedThrough;
  return through?.windowStartMs === start ? firstAfter(keys, through.key) : 0;
}

/** Results of open windows of `sizeMs` matching `filter`, in (window start, key) order; keys a spread close has emitted are outputs, not open results. */
export function openResults(state: WindowAggregateState, sizeMs: number, filter: ResultFilter, toResult: RowResult): WindowResult[] {
  const results: WindowResult[] = [];
  for (const start of startsOf(state)) {
    if (filter.toMs !== undefined && start >= filter.toMs) continue;
    if (filter.fromMs !== undefined && start + sizeMs <= filter.fromMs) continue;
    if (filter.after && start < filter.after.windowStartMs) continue;
    const window = state.open[start] as AggregateWindow;
    const keys = filter.key === undefined ? window.sortedKeys() : [filter.key];
    // Paging: the keys after the position, found by bisection in key order.
    const after = filter.key === undefined && filter.after?.windowStartMs === start ? firstAfter(keys, filter.after.key) : 0;
    for (let i = Math.max(after, firstOpen(state, start, keys)); i < keys.length; i++) {
      const key = keys[i] as string;
      const row = window.index.get(key);
      if (row === undefined || (filter.after && !isAfter({ windowStartMs: start, key }, filter.after))) continue;
      const result = toResult(key, start, window, row, false);
      if (!result) continue;
      results.push(result);
      if (filter.limit !== undefined && results.length >= filter.limit) return results;
    }
  }
  return results;
}

/** The state as the JSON value a whole checkpoint holds. */
export function stateValue(state: WindowAggregateState): unknown {
  const open: Record<string, Record<string, Accumulator>> = {};
  for (const start of Object.keys(state.open)) {
    const window = state.open[start] as AggregateWindow;
    const byKey: Record<string, Accumulator> = (open[start] = {});
    window.keys.forEach((key, row) => (byKey[`$${key}`] = rowValue(window, row)));
  }
  return { maxTimeMs: state.maxTimeMs, lateRecords: state.lateRecords, ...closedThroughField(state.closedThrough), open };
}

/** A state from a whole checkpoint's JSON value; null if it is malformed. */
export function stateFromValue(value: unknown, layout: RowLayout, isAccumulator: (acc: Record<string, unknown>) => boolean): WindowAggregateState | null {
  if (!isKeyedWindows<Accumulator>(value, isAccumulator)) return null;
  for (const [start, byKey] of Object.entries(value.open)) if (!isWindowStart(start) || !Object.keys(byKey).every((slot) => slot.startsWith("$"))) return null;
  let closedThrough;
  try {
    closedThrough = closedThroughOf(value as unknown as Record<string, unknown>);
  } catch {
    return null;
  }
  const state: WindowAggregateState = { maxTimeMs: value.maxTimeMs, lateRecords: value.lateRecords, open: {}, cursor: null, closedThrough };
  addWindows(state, value.open, layout);
  return state;
}

/** Whether a checkpoint's window key is a window start (ms) as the operator writes it: a number's own decimal text. */
export const isWindowStart = (start: string): boolean => Number.isFinite(Number(start)) && String(Number(start)) === start;

/**
 * Adds checked accumulators by window start and `$`-prefixed key to `state` (a key met
 * again replaces its row).
 */
export function addWindows(state: WindowAggregateState, open: Record<string, Record<string, Accumulator>>, layout: RowLayout): void {
  for (const start of Object.keys(open)) {
    const byKey = open[start] as Record<string, Accumulator>;
    const window = windowAt(state, start, layout);
    for (const slot of Object.keys(byKey)) {
      const key = slot.slice(1);
      const row = window.index.get(key) ?? window.add(key);
      setRow(window, row, byKey[slot] as Accumulator);
    }
    keepRuns(window, window.keys);
  }
}
