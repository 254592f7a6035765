/**
 * The state of the window-aggregate operator, as checkpointed, and its structural check
 * on restore.
 */
import { isHllState, type HllState } from "./sketches/hyperloglog.ts";
import { isTopKState, type TopKState } from "./sketches/space-saving.ts";
import { isKeyedWindows, type KeyedWindows } from "./keyed-windows.ts";

/** Running aggregates of one key in one window; `sum`/`min`/`max` are indexed by numeric field (`min` and `max` stay empty unless the spec has a min or max aggregate). */
export interface Accumulator {
  n: number;
  sum: number[];
  min: number[];
  max: number[];
  /** One sketch per `distinct` aggregate, in spec order. */
  hll?: HllState[];
  /** One summary per `topk` aggregate, in spec order. */
  top?: TopKState[];
}

/** Open windows by start (ms), then `$`-prefixed key. */
export type WindowAggregateState = KeyedWindows<Accumulator>;

/** Whether `value` holds exactly `count` items passing `check`; with count 0, it must be absent. */
function hasEach(value: unknown, count: number, check: (item: unknown) => boolean): boolean {
  if (count === 0) return value === undefined;
  return Array.isArray(value) && value.length === count && value.every(check);
}

const isNumberArray = (value: unknown): value is number[] => Array.isArray(value) && value.every((x) => typeof x === "number");

/** A restored state's check: the windows' shape, and exactly one sketch per `distinct` and one summary per `topk` aggregate (none: no field). */
export function isWindowAggregateState(value: unknown, sketchCount: number, summaryCount: number): value is WindowAggregateState {
  return isKeyedWindows<Accumulator>(value, accumulatorCheck(sketchCount, summaryCount));
}

/** The check of one restored accumulator. */
export const accumulatorCheck =
  (sketchCount: number, summaryCount: number) =>
  (acc: Record<string, unknown>): boolean =>
    typeof acc.n === "number" &&
    isNumberArray(acc.sum) &&
    isNumberArray(acc.min) &&
    isNumberArray(acc.max) &&
    hasEach(acc.hll, sketchCount, isHllState) &&
    hasEach(acc.top, summaryCount, isTopKState);
