/**
 * `GET /v1/status?view=summary` (issue 11): the status page as one readable line per
 * partition, for a person at a terminal, with the latest few events of each dataflow.
 */
import type { StatusResponse, StatusSummaryResponse } from "./wire/api.ts";

/** How many of a dataflow's latest events the summary lists. */
const SUMMARY_EVENTS = 5;

type ReplicaView = StatusResponse["dataflows"][number]["partitions"][number]["replicas"][number];

function replicaLine(replica: ReplicaView): string {
  if (replica.error !== undefined) return `${replica.name} ERROR ${replica.error}`;
  const lag = replica.lag ? `, lag ${replica.lag}` : "";
  const late = replica.lateRecords ? `, late ${replica.lateRecords}` : "";
  const open = replica.openEntries === null || replica.openEntries === undefined ? "" : `, ${replica.openEntries} open entries`;
  const rate = replica.eventsPerSecond === null || replica.eventsPerSecond === undefined ? "" : `, ${replica.eventsPerSecond} events/s`;
  return `${replica.role ?? "?"} ${replica.name} lsn ${replica.lsn ?? "?"} (applied ${replica.appliedLsn ?? "?"}${lag}${late}${open}${rate})`;
}

type EdgeView = StatusResponse["dataflows"][number]["edges"][number];

/** `U/p0 → p1: produced 40, delivered 40, acknowledged 38, lag 2` (`?` where a replica did not answer). */
function edgeLine(e: EdgeView): string {
  const n = (x: number | null) => (x === null ? "?" : String(x));
  return `${e.upstream}/p${e.upstreamPartition} → p${e.partition}: produced ${n(e.produced)}, delivered ${n(e.delivered)}, acknowledged ${n(e.acknowledged)}, lag ${n(e.lag)}`;
}

/**
 * One line per partition, e.g. `p0 healthy epoch 3, 128 key groups: primary df/p0/g1 lsn 12
 * (applied 12, 40 open entries); standby df/p0/g2 lsn 12 (applied 12, 40 open entries)`, `at kind p<partition>: detail` per event, and
 * `at stream code ×count` per row of refused ingest requests; for a stage one line per edge
 * into it, and the pipeline's edges (`stream:clicks → page-counts`).
 */
export function summarizeStatus(status: StatusResponse): StatusSummaryResponse {
  return {
    pipeline: status.pipeline.edges.map((e) => `${e.from} → ${e.to}`),
    dataflows: status.dataflows.map((dataflow) => ({
      id: dataflow.id,
      stream: dataflow.stream,
      from: dataflow.from,
      partitions: dataflow.partitions.map((p) => {
        const recovery = p.recovery ? ` [recovering ${p.recovery.replica}: ${p.recovery.phase}]` : "";
        return `p${p.partition} ${p.status} epoch ${p.epoch}, ${p.keyGroups} key groups${recovery}: ${p.replicas.map(replicaLine).join("; ")}`;
      }),
      edges: dataflow.edges.map(edgeLine),
      events: dataflow.events.slice(-SUMMARY_EVENTS).map((e) => `${e.at ?? "?"} ${e.kind} p${e.partition}: ${e.detail}`),
    })),
    faultsEnabled: status.faultsEnabled,
    refusals: status.refusals?.map((r) => `${r.at} ${r.stream} ${r.code} ×${r.count}`) ?? null,
  };
}
