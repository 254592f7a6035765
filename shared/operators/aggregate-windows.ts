/**
 * Open windows of the window-aggregate operator ({@link WindowAggregateState}): closing
 * them as event time advances, serving them to queries, and converting to and from the
 * JSON shape checkpoints hold (`{ maxTimeMs, lateRecords, open: { start: { $key: acc } } }`,
 * unchanged by the compact state, so checkpoints of earlier deploys restore as they are).
 */
import { isAfter, type WindowResult } from "../wire/window-result.ts";
import { AggregateWindow, type RowLayout } from "./aggregate-window.ts";
import { isKeyedWindows } from "./keyed-windows.ts";
import type { Emit, ResultFilter } from "./operator.ts";
import { firstAfter } from "./sorted-slots.ts";
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

/**
 * Raises event time to `timeMs` (never lowers it), then emits, in (start, key) order,
 * every window of `sizeMs` that ends at or before the watermark `timeMs - latenessMs`,
 * and drops them (a checkpoint cursor that still has to write one keeps it).
 */
export function closeDue(state: WindowAggregateState, timeMs: number, sizeMs: number, latenessMs: number, toResult: RowResult, out: Emit<WindowResult>): void {
  if (state.maxTimeMs !== null && timeMs <= state.maxTimeMs) return;
  state.maxTimeMs = timeMs;
  const watermarkMs = timeMs - latenessMs;
  for (const start of startsOf(state).filter((s) => s + sizeMs <= watermarkMs)) {
    const window = state.open[start] as AggregateWindow;
    for (const key of window.sortedKeys()) {
      const result = toResult(key, start, window, window.index.get(key) as number, true);
      if (result) out(result);
    }
    delete state.open[start];
  }
}

/** Results of open windows of `sizeMs` matching `filter`, in (window start, key) order. */
export function openResults(state: WindowAggregateState, sizeMs: number, filter: ResultFilter, toResult: RowResult): WindowResult[] {
  const results: WindowResult[] = [];
  for (const start of startsOf(state)) {
    if (filter.toMs !== undefined && start >= filter.toMs) continue;
    if (filter.fromMs !== undefined && start + sizeMs <= filter.fromMs) continue;
    if (filter.after && start < filter.after.windowStartMs) continue;
    const window = state.open[start] as AggregateWindow;
    const keys = filter.key === undefined ? window.sortedKeys() : [filter.key];
    // Paging: the keys after the position, found by bisection in key order.
    const from = filter.key === undefined && filter.after?.windowStartMs === start ? firstAfter(keys, filter.after.key) : 0;
    for (let i = from; i < keys.length; i++) {
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
  return { maxTimeMs: state.maxTimeMs, lateRecords: state.lateRecords, open };
}

/** A state from a whole checkpoint's JSON value; null if it is malformed. */
export function stateFromValue(value: unknown, layout: RowLayout, isAccumulator: (acc: Record<string, unknown>) => boolean): WindowAggregateState | null {
  if (!isKeyedWindows<Accumulator>(value, isAccumulator)) return null;
  for (const [start, byKey] of Object.entries(value.open)) if (!isWindowStart(start) || !Object.keys(byKey).every((slot) => slot.startsWith("$"))) return null;
  const state: WindowAggregateState = { maxTimeMs: value.maxTimeMs, lateRecords: value.lateRecords, open: {}, cursor: null };
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
  }
}
