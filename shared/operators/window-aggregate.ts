/**
 * Per-key event-time windows with count/sum/min/max/avg, approximate distinct
 * (HyperLogLog) and top-k (Space-Saving) (DESIGN.md §3): tumbling, or sliding (a tumbling
 * window is a sliding one whose slide is its size). A window [start, start+size) closes
 * once the watermark (max event time seen, or ticked, minus allowed lateness) reaches its
 * end; a record all of whose windows have closed is counted as late and dropped.
 * Everything depends only on the records in log order, so replicas agree. Each window
 * keeps its keys' aggregates by column (`aggregate-window.ts`), so a key costs a row,
 * not objects.
 */
import type { AggregateSpec, DataflowSpec } from "../wire/dataflow-spec.ts";
import type { AggregateValue, FluxRecord, WindowResult } from "../wire/window-result.ts";
import type { Emit, Operator, RecordField, ResultFilter } from "./operator.ts";
import { hllAdd, hllCreate, hllEstimate, type HllState } from "./sketches/hyperloglog.ts";
import { topKAdd, topKCreate, topKTop, type TopKState } from "./sketches/space-saving.ts";
import { rowLayout, type AggregateWindow } from "./aggregate-window.ts";
import { aggregateWindowSlicing } from "./aggregate-window-cursor.ts";
import { aggregateWindowMoves } from "./aggregate-window-moves.ts";
import { closeDue, hasDue, openResults, stateFromValue, stateValue, windowAt } from "./aggregate-windows.ts";
import { keepRuns } from "../closing/sorted-runs.ts";
import { accumulatorCheck, type WindowAggregateState } from "./window-aggregate-state.ts";

/** The Space-Saving capacity of a `topk` aggregate that sets none. */
export function defaultCapacity(k: number): number {
  return Math.max(8 * k, 64);
}

/** The fields records carry for a windowed spec: numeric ones (sorted), then those read as strings (sorted). */
export function windowRecordFields(aggregates: Readonly<Record<string, AggregateSpec>>): RecordField[] {
  const numbers = new Set<string>();
  const strings = new Set<string>();
  for (const agg of Object.values(aggregates)) {
    if (agg.op === "sum" || agg.op === "min" || agg.op === "max" || agg.op === "avg") numbers.add(agg.field);
    else if (agg.op === "distinct") strings.add(agg.field);
    else if (agg.op === "topk") {
      strings.add(agg.field);
      if (agg.weight !== undefined) numbers.add(agg.weight);
    }
  }
  return [...[...numbers].sort().map((name) => ({ name, type: "number" as const })), ...[...strings].sort().map((name) => ({ name, type: "string" as const }))];
}

/** A min or max: none before the first value (or while a restored row lacks it). */
const extreme = (n: number, x: number): number | null => (n === 0 || !Number.isFinite(x) ? null : x);

/** The built-in operator; the optional parts of {@link Operator} it always has are required here. */
type WindowAggregateOperator = Operator<WindowAggregateState> & Required<Pick<Operator<WindowAggregateState>, "tick" | "closing" | "snapshot" | "openResults" | "lateRecords" | "openEntries" | "watermarkMs" | "moves">>;

/**
 * Builds the operator for a spec with a window and aggregates (throws without them);
 * {@link windowRecordFields} fixes the record layout. `ticksOnly` (a stage, issue 27):
 * records never advance event time, only ticks do (its upstreams' watermark), so a
 * record from a lagging upstream partition is never late because another one ran ahead.
 */
export function windowAggregate(spec: Pick<DataflowSpec, "window" | "aggregates">, ticksOnly = false): WindowAggregateOperator {
  const { window, aggregates: specAggregates } = spec;
  if (!window || !specAggregates) throw new Error("a dataflow without an operator needs window and aggregates");
  const sizeMs = window.sizeMs;
  // Tumbling windows are sliding windows that slide by their own size.
  const slideMs = window.kind === "sliding" ? window.slideMs : sizeMs;
  const latenessMs = window.allowedLatenessMs;
  const fields = windowRecordFields(specAggregates);
  const width = fields.filter((f) => f.type === "number").length;
  // Per-field minima and maxima only when an aggregate reads them (a spec never changes): otherwise
  // a row has no such columns, and checkpoints hold `min` and `max` empty.
  const keepsExtremes = Object.values(specAggregates).some((a) => a.op === "min" || a.op === "max");
  // Record value position of a field read as a number / as a string.
  const numberAt = (name: string) => fields.findIndex((f) => f.type === "number" && f.name === name);
  const stringAt = (name: string) => fields.findIndex((f) => f.type === "string" && f.name === name);
  const sketches = Object.values(specAggregates).flatMap((a) => (a.op === "distinct" ? [{ at: stringAt(a.field), precision: a.precision }] : []));
  const summaries = Object.values(specAggregates).flatMap((a) =>
    a.op === "topk" ? [{ at: stringAt(a.field), weightAt: a.weight === undefined ? -1 : numberAt(a.weight), capacity: a.capacity ?? defaultCapacity(a.k) }] : [],
  );
  let distinctOrdinal = 0;
  let topOrdinal = 0;
  const aggregates = Object.entries(specAggregates).map(([name, agg]) => ({
    name,
    agg,
    index: agg.op === "count" ? -1 : agg.op === "distinct" ? distinctOrdinal++ : agg.op === "topk" ? topOrdinal++ : numberAt(agg.field),
  }));

  const layout = rowLayout(width, keepsExtremes, sketches.length, summaries.length);
  const { stride } = layout;
  const check = accumulatorCheck(sketches.length, summaries.length);

  const toResult = (key: string, startMs: number, window: AggregateWindow, row: number, closed: boolean): WindowResult => {
    const v = window.values;
    const at = row * stride;
    const n = v[at] as number;
    const values: Record<string, AggregateValue> = {};
    for (const { name, agg, index } of aggregates) {
      if (agg.op === "count") values[name] = n;
      else if (agg.op === "sum") values[name] = v[at + 1 + index] as number;
      else if (agg.op === "min") values[name] = extreme(n, v[at + 1 + width + index] as number);
      else if (agg.op === "max") values[name] = extreme(n, v[at + 1 + 2 * width + index] as number);
      else if (agg.op === "avg") values[name] = n === 0 ? null : (v[at + 1 + index] as number) / n;
      else if (agg.op === "distinct") {
        const hll = window.hll[row * sketches.length + index];
        values[name] = hll ? hllEstimate(hll) : 0;
      } else if (agg.op === "topk") {
        const top = window.top[row * summaries.length + index];
        values[name] = top ? topKTop(top, agg.k) : [];
      }
    }
    return { key, windowStartMs: startMs, windowEndMs: startMs + sizeMs, values, closed };
  };

  /** Adds `record` (`[key, timeMs, ...values]`) to its key's row in `window`. */
  const addTo = (window: AggregateWindow, key: string, record: FluxRecord): void => {
    let row = window.rowForUpdate(key);
    if (row < 0) {
      row = window.add(key);
      for (const s of sketches) window.hll.push(hllCreate(s.precision));
      for (const s of summaries) window.top.push(topKCreate(s.capacity));
    }
    const v = window.values;
    const at = row * stride;
    v[at] = (v[at] as number) + 1;
    for (let i = 0; i < width; i++) {
      const value = record[2 + i];
      const x = typeof value === "number" ? value : 0;
      v[at + 1 + i] = (v[at + 1 + i] as number) + x;
      if (!keepsExtremes) continue;
      if (x < (v[at + 1 + width + i] as number)) v[at + 1 + width + i] = x;
      if (x > (v[at + 1 + 2 * width + i] as number)) v[at + 1 + 2 * width + i] = x;
    }
    for (let j = 0; j < sketches.length; j++) hllAdd(window.hll[row * sketches.length + j] as HllState, String(record[2 + (sketches[j] as { at: number }).at]));
    for (let j = 0; j < summaries.length; j++) {
      const { at: field, weightAt } = summaries[j] as { at: number; weightAt: number };
      const weight = weightAt < 0 ? 1 : record[2 + weightAt];
      topKAdd(window.top[row * summaries.length + j] as TopKState, String(record[2 + field]), typeof weight === "number" ? weight : 0);
    }
  };

  /**
   * The windows one `process` call touches, each looked up once (per record, that cost as
   * much as the record), and added to `touched`.
   */
  const touchedWindows = (state: WindowAggregateState, touched: Set<AggregateWindow>): ((start: number) => AggregateWindow) => {
    let lastStart = Number.NaN;
    let last: AggregateWindow | undefined;
    return (start) => {
      if (start === lastStart && last) return last;
      last = windowAt(state, start, layout);
      touched.add(last);
      lastStart = start;
      return last;
    };
  };

  const advance = (state: WindowAggregateState, timeMs: number, out: Emit<WindowResult>, closeLimit?: number): WindowAggregateState => {
    closeDue(state, timeMs, sizeMs, latenessMs, toResult, out, closeLimit);
    return state;
  };

  return {
    init: () => ({ maxTimeMs: null, lateRecords: 0, open: {}, cursor: null, closedThrough: null }),

    process(state, records: readonly FluxRecord[], out, closeLimit) {
      let maxTimeMs = state.maxTimeMs ?? Number.NEGATIVE_INFINITY;
      const touched = new Set<AggregateWindow>();
      const windowAt = touchedWindows(state, touched);
      // Indexed reads, not `[key, timeMs, ...values]`: the rest array was a fifth of the cost per record.
      for (let r = 0; r < records.length; r++) {
        const record = records[r] as FluxRecord;
        const key = record[0];
        const timeMs = record[1];
        const watermarkMs = maxTimeMs - latenessMs;
        let counted = false;
        // Every window [start, start + size) holding timeMs, newest first; closed ones are skipped.
        for (let start = Math.floor(timeMs / slideMs) * slideMs; start + sizeMs > timeMs; start -= slideMs) {
          if (start + sizeMs <= watermarkMs) break;
          addTo(windowAt(start), key, record);
          counted = true;
        }
        if (!counted) {
          state.lateRecords += 1;
          continue;
        }
        if (timeMs > maxTimeMs && !ticksOnly) maxTimeMs = timeMs;
      }
      // Sorted runs of the keys added (only touched windows gain keys), so a later close need not sort a large window in one step.
      for (const window of touched) keepRuns(window, window.keys);
      return maxTimeMs === Number.NEGATIVE_INFINITY ? state : advance(state, maxTimeMs, out, closeLimit);
    },

    tick: advance,

    closing: (state) => hasDue(state, sizeMs, latenessMs),

    snapshot: stateValue,

    restore(snapshot) {
      const state = stateFromValue(snapshot, layout, check);
      if (!state) throw new Error("window aggregate: malformed checkpoint state");
      return state;
    },

    openResults: (state, filter: ResultFilter) => openResults(state, sizeMs, filter, toResult),

    lateRecords: (state) => state.lateRecords,

    openEntries: (state) => Object.values(state.open).reduce((n, window) => n + window.size, 0),

    watermarkMs: (state) => (state.maxTimeMs === null ? null : state.maxTimeMs - latenessMs),

    slicing: aggregateWindowSlicing(layout, check),

    moves: aggregateWindowMoves(layout, sizeMs, latenessMs, check, toResult),
  };
}
