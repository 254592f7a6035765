/**
 * Pure decisions of the coordinator about dataflow records: the initial routing table
 * of a new dataflow, and whether a re-submitted spec matches the stored one.
 */
import { replicaName } from "./names.ts";
/**
 * A new dataflow's record: every partition at `firstEpoch` (1, or above every epoch an
 * earlier dataflow of the same id used, so its stale routers are fenced), replica
 * generation 0 primary and 1 standby (R=2). With location hints, a partition's two
 * replicas get different ones.
 */
export function planDataflow(id, spec, nowMs, locationHints = [], firstEpoch = 1) {
    const hint = (i) => (locationHints.length === 0 ? null : (locationHints[i % locationHints.length] ?? null));
    const routes = Array.from({ length: spec.partitions }, (_, partition) => {
        const primary = replicaName(id, partition, 0);
        const standby = spec.replication === 2 ? replicaName(id, partition, 1) : null;
        const hints = { [primary]: hint(partition) };
        if (standby)
            hints[standby] = hint(partition + 1);
        return { partition, epoch: firstEpoch, primary, standby, status: "healthy", version: 1, nextGeneration: 2, retired: [], hints, recovery: null };
    });
    return { v: 1, id, spec, createdAtMs: nowMs, ready: false, deleting: false, routes, events: [] };
}
/** Top-level spec fields whose values differ (after defaults), in a stable order. */
export function changedFields(a, b) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    const field = (spec, key) => canonicalJson(spec[key]);
    return keys.filter((key) => field(a, key) !== field(b, key));
}
/** Whether two specs are the same after defaults (key order does not matter). */
export function isSameSpec(a, b) {
    return canonicalJson(a) === canonicalJson(b);
}
function canonicalJson(value) {
    if (Array.isArray(value))
        return `[${value.map(canonicalJson).join(",")}]`;
    if (value !== null && typeof value === "object") {
        const entries = Object.entries(value)
            .filter(([, v]) => v !== undefined)
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
    }
    return JSON.stringify(value);
}
