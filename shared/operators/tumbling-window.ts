/**
 * Per-key event-time windows with count/sum/min/max/avg (DESIGN.md §3): tumbling, or
 * sliding (a tumbling window is a sliding one whose slide is its size). A window
 * [start, start+size) closes once the watermark (max event time seen minus allowed
 * lateness) reaches its end; a record all of whose windows have closed is counted as
 * late and dropped. Everything depends only on the records in log order, so replicas
 * agree. Window starts are numeric strings and keys are stored `$`-prefixed, so no state
 * key is ever a prototype member.
 */
import type { DataflowSpec } from "../wire/dataflow-spec.ts";
import { numericFieldsOf } from "../wire/dataflow-spec.ts";
import type { TumblingWindowState } from "../wire/persisted.ts";
import { isAfter, type ResultPosition, type WindowRecord, type WindowResult } from "../wire/window-result.ts";
import type { Emit, Operator } from "./operator.ts";

/** A tumbling-window operator plus a way to read its open windows for queries. */
export interface TumblingWindowOperator extends Operator<WindowRecord, WindowResult, TumblingWindowState> {
  /** Current, not yet closed, results matching the filter, in (start, key) order. */
  openResults(state: TumblingWindowState, filter: ResultFilter): WindowResult[];
}

/**
 * Which windows a query wants: one key or all, windows overlapping [fromMs, toMs), and
 * for paging, only those after a (window start, key) position, at most `limit` of them.
 */
export interface ResultFilter {
  key?: string | undefined;
  fromMs?: number | undefined;
  toMs?: number | undefined;
  after?: ResultPosition | undefined;
  limit?: number | undefined;
}

/** Builds the operator for a spec; the spec's numeric fields fix the record layout. */
export function tumblingWindow(spec: Pick<DataflowSpec, "window" | "aggregates">): TumblingWindowOperator {
  const sizeMs = spec.window.sizeMs;
  // Tumbling windows are sliding windows that slide by their own size.
  const slideMs = spec.window.kind === "sliding" ? spec.window.slideMs : sizeMs;
  const latenessMs = spec.window.allowedLatenessMs;
  const fields = numericFieldsOf(spec);
  const width = fields.length;
  const aggregates = Object.entries(spec.aggregates).map(([name, agg]) => ({
    name,
    op: agg.op,
    index: agg.op === "count" ? -1 : fields.indexOf(agg.field),
  }));

  type Accumulator = TumblingWindowState["open"][string][string];

  const toResult = (key: string, startMs: number, acc: Accumulator, closed: boolean): WindowResult => {
    const values: Record<string, number | null> = {};
    for (const { name, op, index } of aggregates) {
      if (op === "count") values[name] = acc.n;
      else if (op === "sum") values[name] = acc.sum[index] ?? 0;
      else if (op === "min") values[name] = acc.n === 0 ? null : (acc.min[index] ?? null);
      else if (op === "max") values[name] = acc.n === 0 ? null : (acc.max[index] ?? null);
      else values[name] = acc.n === 0 ? null : (acc.sum[index] ?? 0) / acc.n;
    }
    return { key, windowStartMs: startMs, windowEndMs: startMs + sizeMs, values, closed };
  };

  const closeUpTo = (state: TumblingWindowState, watermarkMs: number, out: Emit<WindowResult>): void => {
    const due = Object.keys(state.open)
      .map(Number)
      .filter((start) => start + sizeMs <= watermarkMs)
      .sort((a, b) => a - b);
    for (const start of due) {
      const byKey = state.open[start] ?? {};
      for (const slot of Object.keys(byKey).sort()) {
        const acc = byKey[slot];
        if (acc) out(toResult(keyOfSlot(slot), start, acc, true));
      }
      delete state.open[start];
    }
  };

  const addTo = (byKey: TumblingWindowState["open"][string], slot: string, values: readonly number[]): void => {
    let acc = byKey[slot];
    if (!acc) {
      acc = { n: 0, sum: new Array<number>(width).fill(0), min: [], max: [] };
      byKey[slot] = acc;
    }
    acc.n += 1;
    for (let i = 0; i < width; i++) {
      const value = values[i] ?? 0;
      acc.sum[i] = (acc.sum[i] ?? 0) + value;
      const min = acc.min[i];
      const max = acc.max[i];
      if (min === undefined || value < min) acc.min[i] = value;
      if (max === undefined || value > max) acc.max[i] = value;
    }
  };

  return {
    init: () => ({ maxTimeMs: null, lateRecords: 0, open: {} }),

    process(state, records, out) {
      let maxTimeMs = state.maxTimeMs ?? Number.NEGATIVE_INFINITY;
      for (const record of records) {
        const [key, timeMs, ...values] = record;
        const watermarkMs = maxTimeMs - latenessMs;
        const slot = slotOfKey(key);
        let counted = false;
        // Every window [start, start + size) holding timeMs, newest first; closed ones are skipped.
        for (let start = Math.floor(timeMs / slideMs) * slideMs; start + sizeMs > timeMs; start -= slideMs) {
          if (start + sizeMs <= watermarkMs) break;
          addTo((state.open[start] ??= {}), slot, values);
          counted = true;
        }
        if (!counted) {
          state.lateRecords += 1;
          continue;
        }
        if (timeMs > maxTimeMs) maxTimeMs = timeMs;
      }
      if (maxTimeMs !== Number.NEGATIVE_INFINITY && maxTimeMs !== state.maxTimeMs) {
        state.maxTimeMs = maxTimeMs;
        closeUpTo(state, maxTimeMs - latenessMs, out);
      }
      return state;
    },

    openResults(state, filter) {
      const results: WindowResult[] = [];
      const starts = Object.keys(state.open)
        .map(Number)
        .sort((a, b) => a - b);
      for (const start of starts) {
        if (filter.toMs !== undefined && start >= filter.toMs) continue;
        if (filter.fromMs !== undefined && start + sizeMs <= filter.fromMs) continue;
        const byKey = state.open[start] ?? {};
        const slots = filter.key === undefined ? Object.keys(byKey).sort() : [slotOfKey(filter.key)];
        for (const slot of slots) {
          const acc = byKey[slot];
          const key = keyOfSlot(slot);
          if (!acc || (filter.after && !isAfter({ windowStartMs: start, key }, filter.after))) continue;
          results.push(toResult(key, start, acc, false));
          if (filter.limit !== undefined && results.length >= filter.limit) return results;
        }
      }
      return results;
    },
  };
}

/**
 * Keys are stored with a `$` prefix so that user keys such as `__proto__` or
 * `constructor` can never collide with Object.prototype members; the prefix keeps the
 * sort order of the keys themselves.
 */
function slotOfKey(key: string): string {
  return `$${key}`;
}

function keyOfSlot(slot: string): string {
  return slot.slice(1);
}
