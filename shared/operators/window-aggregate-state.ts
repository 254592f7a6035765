/**
 * The state of the window-aggregate operator: open windows by start (ms), each stored by
 * column ({@link AggregateWindow}, issue 12), plus event time and the late count. It is
 * not a JSON value: checkpoints hold the accumulators as JSON (`window-row-json.ts`),
 * checked on restore by {@link accumulatorCheck}.
 */
import { isHllState, type HllState } from "./sketches/hyperloglog.ts";
import { isTopKState, type TopKState } from "./sketches/space-saving.ts";
import type { ResultPosition } from "../wire/window-result.ts";
import type { AggregateWindow } from "./aggregate-window.ts";

/** One key's running aggregates in one window as checkpoints hold them; `sum`/`min`/`max` are indexed by numeric field (`min` and `max` empty unless the spec has a min or max aggregate). */
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

/** Open windows of the operator. */
export interface WindowAggregateState {
  maxTimeMs: number | null;
  lateRecords: number;
  /** Open windows by start (ms, as a string key: the order `Object.keys` gives is the order checkpoints list them in). */
  open: Record<string, AggregateWindow>;
  /**
   * How far the close of the oldest due window has gone: its start and the last key (in
   * key order) emitted (null: none of it yet). Set only while a close is spread over
   * several calls (issue 12); its keys up to here are outputs, not open results.
   */
  closedThrough: ResultPosition | null;
  /** Whether due windows are left that a close limit held back; null: not known (a restored state). Memory only, derived. */
  dueLeft?: boolean | null;
  /** The checkpoint cursor open over this state, if any (`aggregate-window-cursor.ts`). */
  cursor: { close(): void } | null;
}

/** Whether `value` holds exactly `count` items passing `check`; with count 0, it must be absent. */
function hasEach(value: unknown, count: number, check: (item: unknown) => boolean): boolean {
  if (count === 0) return value === undefined;
  return Array.isArray(value) && value.length === count && value.every(check);
}

const isNumberArray = (value: unknown): value is number[] => Array.isArray(value) && value.every((x) => typeof x === "number");

/** The check of one restored accumulator: exactly one sketch per `distinct` and one summary per `topk` aggregate (none: no field). */
export const accumulatorCheck =
  (sketchCount: number, summaryCount: number) =>
  (acc: Record<string, unknown>): boolean =>
    typeof acc.n === "number" &&
    isNumberArray(acc.sum) &&
    isNumberArray(acc.min) &&
    isNumberArray(acc.max) &&
    hasEach(acc.hll, sketchCount, isHllState) &&
    hasEach(acc.top, summaryCount, isTopKState);
