/**
 * Reads window results for a dataflow: from the one partition owning `key`, or from
 * all partitions, each served by its primary from the stable prefix, merged in
 * (window start, key) order.
 */
import { FluxError } from "../errors.ts";
import { partitionFor } from "../partitioner.ts";
import { compareResults } from "../wire/window-result.ts";
/**
 * Results matching `filter`, merged across partitions in (window start, key) order. With
 * `filter.limit`, each partition returns at most that many after `filter.after`, and
 * `next` is the position to continue from (null on the last page).
 * @throws FluxError `UNAVAILABLE` naming the partition whose primary could not answer.
 */
export async function readResults(read, record, filter) {
    const routes = filter.key === undefined
        ? record.routes
        : record.routes.filter((r) => r.partition === partitionFor(filter.key ?? "", record.spec.partitions));
    const perPartition = await Promise.all(routes.map((route) => readPartition(read, record.id, route, filter)));
    const merged = perPartition.flat().sort(compareResults);
    const limit = filter.limit;
    // More may follow if the merge overflowed the page, or a partition filled its own.
    const more = limit !== undefined && (merged.length > limit || perPartition.some((page) => page.length >= limit));
    if (!more)
        return { results: merged, next: null };
    const results = merged.slice(0, limit);
    const last = results[results.length - 1];
    return { results, next: last ? { windowStartMs: last.windowStartMs, key: last.key } : null };
}
async function readPartition(read, dataflow, route, filter) {
    let reply;
    try {
        reply = await read(route.primary, route.epoch, filter);
    }
    catch (err) {
        throw new FluxError("UNAVAILABLE", `partition ${route.partition} of dataflow '${dataflow}' could not be read: its primary ${route.primary} did not answer in time or failed (a fail-over may be under way); retry in a moment`, { dataflow, partition: route.partition, replica: route.primary, reason: err instanceof Error ? err.message : String(err) });
    }
    if (reply.status !== "ok") {
        throw new FluxError("UNAVAILABLE", `partition ${route.partition} of dataflow '${dataflow}' could not be read: replica ${route.primary} does not serve as its primary at epoch ${route.epoch} (${reply.status}: a fail-over is under way); retry in a moment`, {
            dataflow,
            partition: route.partition,
            refusal: reply,
        });
    }
    return reply.results;
}
