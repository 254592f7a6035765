/**
 * The column-shaped checkpoint slice of the window-aggregate state (issue 12): a JSON array
 * of windows `{ "start", "stride", "keys": [key, …], "values": [number | null, …] }`, the
 * values row after row in the row layout (`n`, sums, minima, maxima; null for an extreme
 * not set yet). Parsing one makes a string per key and no object per row, where the
 * accumulator slice (`{ start: { $key: { n, sum, min, max } } }`) made five, so a fresh
 * replica restores a 1M-key seed with less work and garbage. Only rows without sketches
 * use it; an array at the top level tells it from the accumulator slice, which deploys
 * before it wrote and which still restores.
 */
import type { AggregateWindow, RowLayout } from "./aggregate-window.ts";
import { isWindowStart, windowAt } from "./aggregate-windows.ts";
import type { WindowAggregateState } from "./window-aggregate-state.ts";

/** Whether rows of `layout` are written as columns: they have no sketches, which stay JSON objects. */
export const hasColumnSlices = (layout: RowLayout): boolean => layout.sketches === 0 && layout.summaries === 0;

/** Whether a parsed slice is column-shaped (else it is an accumulator slice). */
export const isColumnSlice = (slice: unknown): slice is unknown[] => Array.isArray(slice);

/** A row's values as slice text (`,`-separated, no brackets), from `v` at `at`: ±∞ (an extreme not set) as null. */
export function rowColumnsText(stride: number, v: Float64Array, at: number): string {
  let text = "";
  for (let i = 0; i < stride; i++) {
    const x = v[at + i] as number;
    text += `${i === 0 ? "" : ","}${Number.isFinite(x) ? x : "null"}`;
  }
  return text;
}

/** One window's part of a slice: `keysText` and `valuesText` are the JSON list items, already joined by commas. */
export function windowColumnsText(start: string, stride: number, keysText: string, valuesText: string): string {
  return `{"start":${JSON.stringify(start)},"stride":${stride},"keys":[${keysText}],"values":[${valuesText}]}`;
}

interface WindowColumns {
  start: string;
  keys: string[];
  values: (number | null)[];
}

/** Adds a column slice's rows to `state` (a key met again replaces its row); throws, changing nothing, if it is malformed. */
export function addColumnSlice(state: WindowAggregateState, slice: unknown[], layout: RowLayout): void {
  const windows = slice.map((w) => checkedWindow(w, layout));
  for (const { start, keys, values } of windows) {
    const window = windowAt(state, start, layout);
    for (let i = 0; i < keys.length; i++) setRowColumns(window, keys[i] as string, values, i * layout.stride);
  }
}

function setRowColumns(window: AggregateWindow, key: string, values: readonly (number | null)[], from: number): void {
  const { stride, width } = window.layout;
  const row = window.index.get(key) ?? window.add(key);
  // Read after `add`: it may have replaced the array.
  const v = window.values;
  const at = row * stride;
  for (let i = 0; i < stride; i++) {
    const x = values[from + i] as number | null;
    // Only extremes are null (checked): minima first, then maxima.
    v[at + i] = x ?? (i <= 2 * width ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY);
  }
}

/** A slice's window, checked against the layout: throws if anything in it is malformed. */
function checkedWindow(value: unknown, layout: RowLayout): WindowColumns {
  const w = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
  const { start, stride, keys, values } = w;
  if (typeof start !== "string" || !isWindowStart(start)) throw new Error("checkpoint slice: malformed window start");
  if (!hasColumnSlices(layout) || stride !== layout.stride) throw new Error(`checkpoint slice: rows of window ${start} do not fit the operator's layout`);
  if (!Array.isArray(keys) || !Array.isArray(values) || values.length !== keys.length * layout.stride) throw new Error(`checkpoint slice: malformed columns in window ${start}`);
  if (!keys.every((key) => typeof key === "string")) throw new Error(`checkpoint slice: a key in window ${start} is not a string`);
  for (let i = 0; i < values.length; i++) if (!isValueAt(values[i], i % layout.stride, layout.width)) throw new Error(`checkpoint slice: malformed value in window ${start}`);
  return { start, keys: keys as string[], values: values as (number | null)[] };
}

/** Counts and sums are finite numbers; an extreme (a column past `width`) may also be null (not set). */
function isValueAt(x: unknown, column: number, width: number): boolean {
  return typeof x === "number" ? Number.isFinite(x) : x === null && column > width;
}
