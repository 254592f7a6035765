import { hllAdd, hllCreate, hllEstimate } from "./sketches/hyperloglog.ts";
import { topKAdd, topKCreate, topKTop } from "./sketches/space-saving.ts";
import { advanceTo, openWindowResults, slotOfKey } from "./keyed-windows.ts";
import { isWindowAggregateState } from "./window-aggregate-state.ts";
/** The Space-Saving capacity of a `topk` aggregate that sets none. */
export function defaultCapacity(k) {
    return Math.max(8 * k, 64);
}
/** The fields records carry for a windowed spec: numeric ones (sorted), then those read as strings (sorted). */
export function windowRecordFields(aggregates) {
    const numbers = new Set();
    const strings = new Set();
    for (const agg of Object.values(aggregates)) {
        if (agg.op === "sum" || agg.op === "min" || agg.op === "max" || agg.op === "avg")
            numbers.add(agg.field);
        else if (agg.op === "distinct")
            strings.add(agg.field);
        else if (agg.op === "topk") {
            strings.add(agg.field);
            if (agg.weight !== undefined)
                numbers.add(agg.weight);
        }
    }
    return [...[...numbers].sort().map((name) => ({ name, type: "number" })), ...[...strings].sort().map((name) => ({ name, type: "string" }))];
}
/**
 * Builds the operator for a spec with a window and aggregates (throws without them);
 * {@link windowRecordFields} fixes the record layout.
 */
export function windowAggregate(spec) {
    const { window, aggregates: specAggregates } = spec;
    if (!window || !specAggregates)
        throw new Error("a dataflow without an operator needs window and aggregates");
    const sizeMs = window.sizeMs;
    // Tumbling windows are sliding windows that slide by their own size.
    const slideMs = window.kind === "sliding" ? window.slideMs : sizeMs;
    const latenessMs = window.allowedLatenessMs;
    const fields = windowRecordFields(specAggregates);
    const width = fields.filter((f) => f.type === "number").length;
    // Record value position of a field read as a number / as a string.
    const numberAt = (name) => fields.findIndex((f) => f.type === "number" && f.name === name);
    const stringAt = (name) => fields.findIndex((f) => f.type === "string" && f.name === name);
    const sketches = Object.values(specAggregates).flatMap((a) => (a.op === "distinct" ? [{ at: stringAt(a.field), precision: a.precision }] : []));
    const summaries = Object.values(specAggregates).flatMap((a) => a.op === "topk" ? [{ at: stringAt(a.field), weightAt: a.weight === undefined ? -1 : numberAt(a.weight), capacity: a.capacity ?? defaultCapacity(a.k) }] : []);
    let distinctOrdinal = 0;
    let topOrdinal = 0;
    const aggregates = Object.entries(specAggregates).map(([name, agg]) => ({
        name,
        agg,
        index: agg.op === "count" ? -1 : agg.op === "distinct" ? distinctOrdinal++ : agg.op === "topk" ? topOrdinal++ : numberAt(agg.field),
    }));
    const toResult = (key, startMs, acc, closed) => {
        const values = {};
        for (const { name, agg, index } of aggregates) {
            if (agg.op === "count")
                values[name] = acc.n;
            else if (agg.op === "sum")
                values[name] = acc.sum[index] ?? 0;
            else if (agg.op === "min")
                values[name] = acc.n === 0 ? null : (acc.min[index] ?? null);
            else if (agg.op === "max")
                values[name] = acc.n === 0 ? null : (acc.max[index] ?? null);
            else if (agg.op === "avg")
                values[name] = acc.n === 0 ? null : (acc.sum[index] ?? 0) / acc.n;
            else if (agg.op === "distinct") {
                const hll = acc.hll?.[index];
                values[name] = hll ? hllEstimate(hll) : 0;
            }
            else if (agg.op === "topk") {
                const top = acc.top?.[index];
                values[name] = top ? topKTop(top, agg.k) : [];
            }
        }
        return { key, windowStartMs: startMs, windowEndMs: startMs + sizeMs, values, closed };
    };
    const addTo = (byKey, slot, values) => {
        let acc = byKey[slot];
        if (!acc) {
            acc = { n: 0, sum: new Array(width).fill(0), min: [], max: [] };
            if (sketches.length > 0)
                acc.hll = sketches.map((s) => hllCreate(s.precision));
            if (summaries.length > 0)
                acc.top = summaries.map((s) => topKCreate(s.capacity));
            byKey[slot] = acc;
        }
        acc.n += 1;
        for (let i = 0; i < width; i++) {
            const value = values[i];
            const x = typeof value === "number" ? value : 0;
            acc.sum[i] = (acc.sum[i] ?? 0) + x;
            const min = acc.min[i];
            const max = acc.max[i];
            if (min === undefined || x < min)
                acc.min[i] = x;
            if (max === undefined || x > max)
                acc.max[i] = x;
        }
        if (acc.hll)
            for (let j = 0; j < sketches.length; j++)
                hllAdd(acc.hll[j], String(values[sketches[j].at]));
        if (acc.top) {
            for (let j = 0; j < summaries.length; j++) {
                const { at, weightAt } = summaries[j];
                const weight = weightAt < 0 ? 1 : values[weightAt];
                topKAdd(acc.top[j], String(values[at]), typeof weight === "number" ? weight : 0);
            }
        }
    };
    const advance = (state, timeMs, out) => {
        advanceTo(state, timeMs, sizeMs, latenessMs, toResult, out);
        return state;
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
                    if (start + sizeMs <= watermarkMs)
                        break;
                    addTo((state.open[start] ??= {}), slot, values);
                    counted = true;
                }
                if (!counted) {
                    state.lateRecords += 1;
                    continue;
                }
                if (timeMs > maxTimeMs)
                    maxTimeMs = timeMs;
            }
            return maxTimeMs === Number.NEGATIVE_INFINITY ? state : advance(state, maxTimeMs, out);
        },
        tick: advance,
        restore(snapshot) {
            if (!isWindowAggregateState(snapshot, sketches.length, summaries.length))
                throw new Error("window aggregate: malformed checkpoint state");
            return snapshot;
        },
        openResults: (state, filter) => openWindowResults(state, sizeMs, filter, toResult),
        lateRecords: (state) => state.lateRecords,
    };
}
