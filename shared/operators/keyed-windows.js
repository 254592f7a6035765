/**
 * Per-key event-time windows as operators keep them in their state: open windows by
 * start (ms), then `$`-prefixed key, plus the highest event time seen. Closing windows
 * as event time advances, serving open windows to queries and checking a restored state
 * are the same for every such operator (the built-in aggregates, heavy-hitters), so they
 * live here; each operator supplies its accumulator and how one becomes a result.
 */
import { isAfter } from "../wire/window-result.ts";
/**
 * Keys are stored with a `$` prefix so that user keys such as `__proto__` or
 * `constructor` can never collide with Object.prototype members; the prefix keeps the
 * sort order of the keys themselves.
 */
export function slotOfKey(key) {
    return `$${key}`;
}
function keyOfSlot(slot) {
    return slot.slice(1);
}
/**
 * Raises event time to `timeMs` (never lowers it), then emits, in (start, key) order,
 * every window of `sizeMs` that ends at or before the watermark `timeMs - latenessMs`,
 * and drops them.
 */
export function advanceTo(state, timeMs, sizeMs, latenessMs, toResult, out) {
    if (state.maxTimeMs !== null && timeMs <= state.maxTimeMs)
        return;
    state.maxTimeMs = timeMs;
    const watermarkMs = timeMs - latenessMs;
    const due = Object.keys(state.open)
        .map(Number)
        .filter((start) => start + sizeMs <= watermarkMs)
        .sort((a, b) => a - b);
    for (const start of due) {
        const byKey = state.open[start] ?? {};
        for (const slot of Object.keys(byKey).sort()) {
            const acc = byKey[slot];
            const result = acc === undefined ? null : toResult(keyOfSlot(slot), start, acc, true);
            if (result)
                out(result);
        }
        delete state.open[start];
    }
}
/** Results of open windows of `sizeMs` matching `filter`, in (window start, key) order. */
export function openWindowResults(state, sizeMs, filter, toResult) {
    const results = [];
    const starts = Object.keys(state.open)
        .map(Number)
        .sort((a, b) => a - b);
    for (const start of starts) {
        if (filter.toMs !== undefined && start >= filter.toMs)
            continue;
        if (filter.fromMs !== undefined && start + sizeMs <= filter.fromMs)
            continue;
        const byKey = state.open[start] ?? {};
        const slots = filter.key === undefined ? Object.keys(byKey).sort() : [slotOfKey(filter.key)];
        for (const slot of slots) {
            const acc = byKey[slot];
            const key = keyOfSlot(slot);
            if (acc === undefined || (filter.after && !isAfter({ windowStartMs: start, key }, filter.after)))
                continue;
            const result = toResult(key, start, acc, false);
            if (!result)
                continue;
            results.push(result);
            if (filter.limit !== undefined && results.length >= filter.limit)
                return results;
        }
    }
    return results;
}
/**
 * Whether `value` has the shape of {@link KeyedWindows} with every accumulator passing
 * `isAccumulator`. Plain loops rather than a schema: a checkpoint of a large partition
 * holds millions of accumulators, and a schema per entry made loading it take seconds.
 */
export function isKeyedWindows(value, isAccumulator) {
    if (typeof value !== "object" || value === null)
        return false;
    const s = value;
    if (!(s.maxTimeMs === null || typeof s.maxTimeMs === "number") || typeof s.lateRecords !== "number")
        return false;
    if (typeof s.open !== "object" || s.open === null)
        return false;
    for (const byKey of Object.values(s.open)) {
        if (typeof byKey !== "object" || byKey === null)
            return false;
        for (const acc of Object.values(byKey)) {
            if (typeof acc !== "object" || acc === null || !isAccumulator(acc))
                return false;
        }
    }
    return true;
}
