/**
 * A row of an {@link AggregateWindow} as the JSON accumulator checkpoints hold
 * (`{ n, sum, min, max, hll?, top? }`, the shape every deploy before issue 12's compact
 * state wrote and restores): written as text directly, byte for byte what
 * `JSON.stringify` of that accumulator gives, and read back into a row.
 */
import type { AggregateWindow, RowLayout } from "./aggregate-window.ts";
import type { HllState } from "./sketches/hyperloglog.ts";
import type { TopKState } from "./sketches/space-saving.ts";
import type { Accumulator } from "./window-aggregate-state.ts";

/** The JSON text of `row`'s accumulator. */
export function rowText(window: AggregateWindow, row: number): string {
  return `${rowNumbersText(window.layout, window.values, row * window.layout.stride)}${rowSketchesText(window, row)}}`;
}

/** The accumulator text up to its sketches, unclosed: `{"n":…,"sum":[…],"min":[…],"max":[…]`, from a row at `at` of `v`. */
export function rowNumbersText(layout: RowLayout, v: Float64Array, at: number): string {
  const { width, extremes } = layout;
  let sum = "";
  for (let i = 0; i < width; i++) sum += `${i === 0 ? "" : ","}${v[at + 1 + i] as number}`;
  return `{"n":${v[at] as number},"sum":[${sum}],"min":[${extremes ? finitePrefix(v, at + 1 + width, width) : ""}],"max":[${extremes ? finitePrefix(v, at + 1 + 2 * width, width) : ""}]`;
}

/** The rest of `row`'s accumulator text before its closing brace: `,"hll":[…]` and `,"top":[…]` when it has them. */
export function rowSketchesText(window: AggregateWindow, row: number): string {
  const { sketches, summaries } = window.layout;
  let text = "";
  if (sketches > 0) text += `,"hll":${JSON.stringify(window.hll.slice(row * sketches, (row + 1) * sketches))}`;
  if (summaries > 0) text += `,"top":${JSON.stringify(window.top.slice(row * summaries, (row + 1) * summaries))}`;
  return text;
}

/**
 * The values from `from` up to the first that is not finite: an extreme not set yet (±∞)
 * ends the list, as the array it stands for was shorter (a row restored from such an array).
 */
function finitePrefix(v: Float64Array, from: number, count: number): string {
  let text = "";
  for (let i = 0; i < count; i++) {
    const x = v[from + i] as number;
    if (!Number.isFinite(x)) break;
    text += `${i === 0 ? "" : ","}${x}`;
  }
  return text;
}

/** `row`'s accumulator as a JSON value of its own (for `snapshot`, not a hot path). */
export function rowValue(window: AggregateWindow, row: number): Accumulator {
  return JSON.parse(rowText(window, row)) as Accumulator;
}

/** Sets `row` from a checked accumulator (`accumulatorCheck`): missing sums are 0, missing extremes unset. */
export function setRow(window: AggregateWindow, row: number, acc: Accumulator): void {
  const { width, extremes, stride, sketches, summaries } = window.layout;
  const v = window.values;
  const at = row * stride;
  v[at] = acc.n;
  for (let i = 0; i < width; i++) {
    v[at + 1 + i] = acc.sum[i] ?? 0;
    if (!extremes) continue;
    v[at + 1 + width + i] = acc.min[i] ?? Number.POSITIVE_INFINITY;
    v[at + 1 + 2 * width + i] = acc.max[i] ?? Number.NEGATIVE_INFINITY;
  }
  placeEach(window.hll, row * sketches, acc.hll ?? []);
  placeEach(window.top, row * summaries, acc.top ?? []);
}

/** Puts `items` at `from..` of `list`, which holds every earlier row's (rows are added in order). */
function placeEach<T extends HllState | TopKState>(list: T[], from: number, items: readonly T[]): void {
  for (let j = 0; j < items.length; j++) list[from + j] = items[j] as T;
}
