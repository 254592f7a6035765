/**
 * The state of the window-aggregate operator, as checkpointed, and its structural check
 * on restore.
 */
import { isHllState, type HllState } from "./sketches/hyperloglog.ts";
import { isTopKState, type TopKState } from "./sketches/space-saving.ts";

/** Running aggregates of one key in one window; `sum`/`min`/`max` are indexed by numeric field. */
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
export interface WindowAggregateState {
  maxTimeMs: number | null;
  lateRecords: number;
  open: Record<string, Record<string, Accumulator>>;
}

/** Whether `value` holds exactly `count` items passing `check`; with count 0, it must be absent. */
function hasEach(value: unknown, count: number, check: (item: unknown) => boolean): boolean {
  if (count === 0) return value === undefined;
  return Array.isArray(value) && value.length === count && value.every(check);
}

const isNumberArray = (value: unknown): value is number[] => Array.isArray(value) && value.every((x) => typeof x === "number");

/**
 * Checked with plain loops rather than a schema: a checkpoint of a large partition holds
 * millions of accumulators, and a schema per entry made loading it take seconds.
 */
export function isWindowAggregateState(value: unknown, sketchCount: number, summaryCount: number): value is WindowAggregateState {
  if (typeof value !== "object" || value === null) return false;
  const s = value as Record<string, unknown>;
  if (!(s.maxTimeMs === null || typeof s.maxTimeMs === "number") || typeof s.lateRecords !== "number") return false;
  if (typeof s.open !== "object" || s.open === null) return false;
  for (const byKey of Object.values(s.open as Record<string, unknown>)) {
    if (typeof byKey !== "object" || byKey === null) return false;
    for (const a of Object.values(byKey as Record<string, unknown>)) {
      if (typeof a !== "object" || a === null) return false;
      const acc = a as Record<string, unknown>;
      if (typeof acc.n !== "number" || !isNumberArray(acc.sum) || !isNumberArray(acc.min) || !isNumberArray(acc.max)) return false;
      // Exactly one sketch per `distinct` and one summary per `topk` aggregate (none: no field).
      if (!hasEach(acc.hll, sketchCount, isHllState) || !hasEach(acc.top, summaryCount, isTopKState)) return false;
    }
  }
  return true;
}
