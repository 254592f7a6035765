/** The one place Durable Object instance names are built (STYLE.md §7). */

/**
 * Name of the one registry object (issue 29: the dataflow directory, stream schemas and
 * token revocations; on no ingest, read or probe path). Still "coordinator": the name a
 * deployment's existing object has, whose storage the upgrade migrates.
 */
export const COORDINATOR_NAME = "coordinator";

/** Name of the monitor of dataflow `dataflowId` (issue 29: one per dataflow, its own alarm). */
export function monitorName(dataflowId: string): string {
  return dataflowId;
}

/** Name of the routing directory of stream `stream` (issue 29: which dataflows read it, its schema). */
export function directoryName(stream: string): string {
  return stream;
}

/** The dataflow a replica belongs to: the part of its name before the first '/' (dataflow ids hold none). */
export function dataflowOfReplica(replica: string): string {
  const slash = replica.indexOf("/");
  return slash < 0 ? replica : replica.slice(0, slash);
}

/**
 * Name of one replica of a partition. `generation` numbers the replicas a partition has
 * had: 0 and 1 at creation, higher ones for replacements, so a fresh replica never
 * reuses a failed one's storage.
 */
export function replicaName(dataflowId: string, partition: number, generation: number): string {
  return `${dataflowId}/p${partition}/g${generation}`;
}

/** The one IngestStats instance (refusal counts for the dashboard). */
export const INGEST_STATS_NAME = "ingest-stats";
