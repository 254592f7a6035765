/**
 * Reads window results for a dataflow: from the one partition owning `key`, or from
 * all partitions, each served by its primary from the stable prefix, merged in
 * (window start, key) order. Once key groups have moved (issue 28), a key's windows closed
 * before its group moved stay with its old partition: a read for one key then asks every
 * partition.
 */
import { FluxError } from "../errors.ts";
import type { ResultFilter } from "../operators/operator.ts";
import { keyGroupMapOf, partitionOfKey } from "../keygroups/key-groups.ts";
import type { Refusal } from "../wire/replica-rpc.ts";
import type { DataflowRecord, PartitionRoute } from "../wire/routing.ts";
import { compareResults, type ResultPosition, type WindowResult } from "../wire/window-result.ts";

/** Reads one replica's results. */
export type ReadReplicaResults = (
  name: string,
  epoch: number,
  filter: ResultFilter,
) => Promise<{ status: "ok"; results: WindowResult[] } | Refusal>;

/**
 * Results matching `filter`, merged across partitions in (window start, key) order. With
 * `filter.limit`, at most that many after `filter.after`, and `next` is the position to
 * continue from: null on the last page, including one that is exactly full.
 * @throws FluxError `UNAVAILABLE` naming the partition whose primary could not answer.
 */
export async function readResults(
  read: ReadReplicaResults,
  record: DataflowRecord,
  filter: ResultFilter,
): Promise<{ results: WindowResult[]; next: ResultPosition | null }> {
  const groups = keyGroupMapOf(record);
  const owner = filter.key === undefined || groups.owners !== null ? null : partitionOfKey(groups, filter.key);
  const routes = owner === null ? record.routes : record.routes.filter((r) => r.partition === owner);
  const limit = filter.limit;
  // One more than the page from each partition: if the merge holds more than `limit`, one
  // follows the page; if not, every partition returned all it had after `filter.after`.
  const asked = limit === undefined ? filter : { ...filter, limit: limit + 1 };
  const perPartition = await Promise.all(routes.map((route) => readPartition(read, record.id, route, asked)));
  const merged = perPartition.flat().sort(compareResults);
  if (limit === undefined || merged.length <= limit) return { results: merged, next: null };
  const results = merged.slice(0, limit);
  const last = results[results.length - 1];
  return { results, next: last ? { windowStartMs: last.windowStartMs, key: last.key } : null };
}

async function readPartition(read: ReadReplicaResults, dataflow: string, route: PartitionRoute, filter: ResultFilter): Promise<WindowResult[]> {
  let reply: Awaited<ReturnType<ReadReplicaResults>>;
  try {
    reply = await read(route.primary, route.epoch, filter);
  } catch (err) {
    throw new FluxError(
      "UNAVAILABLE",
      `partition ${route.partition} of dataflow '${dataflow}' could not be read: its primary ${route.primary} did not answer in time or failed (a fail-over may be under way); retry in a moment`,
      { dataflow, partition: route.partition, replica: route.primary, reason: err instanceof Error ? err.message : String(err) },
    );
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
