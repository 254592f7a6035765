/** The one place Durable Object instance names are built (STYLE.md §7). */
/** Name of the single coordinator object. */
export const COORDINATOR_NAME = "coordinator";
/**
 * Name of one replica of a partition. `generation` numbers the replicas a partition has
 * had: 0 and 1 at creation, higher ones for replacements, so a fresh replica never
 * reuses a failed one's storage.
 */
export function replicaName(dataflowId, partition, generation) {
    return `${dataflowId}/p${partition}/g${generation}`;
}
/** The one IngestStats instance (refusal counts for the dashboard). */
export const INGEST_STATS_NAME = "ingest-stats";
