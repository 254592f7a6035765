/**
 * Per-key event-time windows with count/sum/min/max/avg, approximate distinct
 * (HyperLogLog) and top-k (Space-Saving) (DESIGN.md §3): tumbling, or sliding (a tumbling
 * window is a sliding one whose slide is its size). A window [start, start+size) closes
 * once the watermark (max event time seen, or ticked, minus allowed lateness) reaches its
 * end; a record all of whose windows have closed is counted as late and dropped.
 * Everything depends only on the records in log order, so replicas agree. Window starts
 * are numeric strings and keys are stored `$`-prefixed, so no state key is ever a
 * prototype member.
 */
import type { AggregateSpec, DataflowSpec } from "../wire/dataflow-spec.ts";
import type { AggregateValue, FluxRecord, WindowResult } from "../wire/window-result.ts";
import type { Emit, Operator, RecordField, ResultFilter } from "./operator.ts";
import { hllAdd, hllCreate, hllEstimate, type HllState } from "./sketches/hyperloglog.ts";
import { topKAdd, topKCreate, topKTop, type TopKState } from "./sketches/space-saving.ts";
import { advanceTo, openWindowResults } from "./keyed-windows.ts";
import { accumulatorCheck, isWindowAggregateState, type Accumulator, type WindowAggregateState } from "./window-aggregate-state.ts";
import { keyedWindowSlicing } from "./keyed-window-slices.ts";
import { windowKeys, type WindowKeys } from "./keyed-window-cursor.ts";

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

/** The built-in operator; the optional parts of {@link Operator} it always has are required here. */
type WindowAggregateOperator = Operator<WindowAggregateState> & Required<Pick<Operator<WindowAggregateState>, "tick" | "openResults" | "lateRecords">>;

/**
 * Builds the operator for a spec with a window and aggregates (throws without them);
 * {@link windowRecordFields} fixes the record layout.
 */
export function windowAggregate(spec: Pick<DataflowSpec, "window" | "aggregates">): WindowAggregateOperator {
  const { window, aggregates: specAggregates } = spec;
  if (!window || !specAggregates) throw new Error("a dataflow without an operator needs window and aggregates");
  const sizeMs = window.sizeMs;
  // Tumbling windows are sliding windows that slide by their own size.
  const slideMs = window.kind === "sliding" ? window.slideMs : sizeMs;
  const latenessMs = window.allowedLatenessMs;
  const fields = windowRecordFields(specAggregates);
  const width = fields.filter((f) => f.type === "number").length;
  // Per-field minima and maxima only when an aggregate reads them (a spec never changes): otherwise
  // `min` and `max` stay empty, two arrays fewer to reach per record (on a busy isolate, whose
  // caches hold other work between sub-batches, each is a cache miss; issue 12).
  const keepsExtremes = Object.values(specAggregates).some((a) => a.op === "min" || a.op === "max");
  // Sized at creation: an empty array written at index 0 grows a 17-slot backing store, which for
  // min and max was over half of a 1M-key state's heap (and of every full GC's pause).
  const extremes = (): number[] => (keepsExtremes ? new Array<number>(width) : []);
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

  const toResult = (key: string, startMs: number, acc: Accumulator, closed: boolean): WindowResult => {
    const values: Record<string, AggregateValue> = {};
    for (const { name, agg, index } of aggregates) {
      if (agg.op === "count") values[name] = acc.n;
      else if (agg.op === "sum") values[name] = acc.sum[index] ?? 0;
      else if (agg.op === "min") values[name] = acc.n === 0 ? null : (acc.min[index] ?? null);
      else if (agg.op === "max") values[name] = acc.n === 0 ? null : (acc.max[index] ?? null);
      else if (agg.op === "avg") values[name] = acc.n === 0 ? null : (acc.sum[index] ?? 0) / acc.n;
      else if (agg.op === "distinct") {
        const hll = acc.hll?.[index];
        values[name] = hll ? hllEstimate(hll) : 0;
      } else if (agg.op === "topk") {
        const top = acc.top?.[index];
        values[name] = top ? topKTop(top, agg.k) : [];
      }
    }
    return { key, windowStartMs: startMs, windowEndMs: startMs + sizeMs, values, closed };
  };

  /** Adds `record` (`[key, timeMs, ...values]`) to its key's accumulator in `window`. */
  const addTo = (window: WindowKeys<Accumulator>, key: string, record: FluxRecord): void => {
    let acc = window.forUpdate(key);
    if (!acc) {
      acc = { n: 0, sum: new Array<number>(width).fill(0), min: extremes(), max: extremes() };
      if (sketches.length > 0) acc.hll = sketches.map((s) => hllCreate(s.precision));
      if (summaries.length > 0) acc.top = summaries.map((s) => topKCreate(s.capacity));
      window.add(key, acc);
    }
    acc.n += 1;
    for (let i = 0; i < width; i++) {
      const value = record[2 + i];
      const x = typeof value === "number" ? value : 0;
      acc.sum[i] = (acc.sum[i] ?? 0) + x;
      if (!keepsExtremes) continue;
      const min = acc.min[i];
      const max = acc.max[i];
      if (min === undefined || x < min) acc.min[i] = x;
      if (max === undefined || x > max) acc.max[i] = x;
    }
    if (acc.hll) for (let j = 0; j < sketches.length; j++) hllAdd(acc.hll[j] as HllState, String(record[2 + (sketches[j] as { at: number }).at]));
    if (acc.top) {
      for (let j = 0; j < summaries.length; j++) {
        const { at, weightAt } = summaries[j] as { at: number; weightAt: number };
        const weight = weightAt < 0 ? 1 : record[2 + weightAt];
        topKAdd(acc.top[j] as TopKState, String(record[2 + at]), typeof weight === "number" ? weight : 0);
      }
    }
  };

  /** The windows one `process` call touches, each looked up once (per record, that cost as much as the record). */
  const touchedWindows = (state: WindowAggregateState): ((start: number) => WindowKeys<Accumulator>) => {
    const windows = new Map<number, WindowKeys<Accumulator>>();
    let lastStart = Number.NaN;
    let last: WindowKeys<Accumulator> | undefined;
    return (start) => {
      if (start === lastStart && last) return last;
      last = windows.get(start);
      if (!last) windows.set(start, (last = windowKeys(state, start)));
      lastStart = start;
      return last;
    };
  };

  const advance = (state: WindowAggregateState, timeMs: number, out: Emit<WindowResult>): WindowAggregateState => {
    advanceTo(state, timeMs, sizeMs, latenessMs, toResult, out);
    return state;
  };

  return {
    init: () => ({ maxTimeMs: null, lateRecords: 0, open: {} }),

    process(state, records: readonly FluxRecord[], out) {
      let maxTimeMs = state.maxTimeMs ?? Number.NEGATIVE_INFINITY;
      const windowAt = touchedWindows(state);
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
        if (timeMs > maxTimeMs) maxTimeMs = timeMs;
      }
      return maxTimeMs === Number.NEGATIVE_INFINITY ? state : advance(state, maxTimeMs, out);
    },

    tick: advance,

    restore(snapshot) {
      if (!isWindowAggregateState(snapshot, sketches.length, summaries.length)) throw new Error("window aggregate: malformed checkpoint state");
      return snapshot;
    },

    openResults: (state, filter: ResultFilter) => openWindowResults(state, sizeMs, filter, toResult),

    lateRecords: (state) => state.lateRecords,

    slicing: keyedWindowSlicing<Accumulator>(accumulatorCheck(sketches.length, summaries.length)),
  };
}
