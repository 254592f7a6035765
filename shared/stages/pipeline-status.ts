/**
 * The pipeline as `/v1/status` shows it (issue 27): streams and dataflows as nodes, what
 * each reads as edges, and per edge between an upstream partition and a stage's partition
 * how many results the upstream produced, delivered and had acknowledged (its lag).
 * Produced and acknowledged come from durable state (the upstream primary's output count,
 * the stage primary's per-source progress); delivered is the upstream primary's memory.
 */
import { sourceKey } from "../exchange/exchange-types.ts";
import { sourcesOf, type DataflowSpec } from "../wire/dataflow-spec.ts";
import type { ReplicaStatus } from "../wire/replica-rpc.ts";

/** A dataflow as the status page has it: its id, spec and each partition's primary status (null: did not answer). */
export interface DataflowStatusView {
  id: string;
  spec: Pick<DataflowSpec, "stream" | "from">;
  primaries: (ReplicaStatus | null)[];
}

/** One edge between an upstream partition and a stage's partition. Counts are null when the replica holding them did not answer. */
export interface EdgeView {
  upstream: string;
  upstreamPartition: number;
  partition: number;
  produced: number | null;
  delivered: number | null;
  acknowledged: number | null;
  lag: number | null;
}

/** The pipeline graph: every stream read and every dataflow, and who reads whom. */
export interface PipelineView {
  nodes: { id: string; kind: "stream" | "dataflow" }[];
  edges: { from: string; to: string }[];
}

/** The graph over `dataflows` (a stream node is named `stream:NAME`, so it cannot clash with a dataflow id). */
export function pipelineOf(dataflows: readonly DataflowStatusView[]): PipelineView {
  const streams = [...new Set(dataflows.flatMap((d) => (d.spec.stream === undefined ? [] : [d.spec.stream])))].sort();
  const nodes = [...streams.map((s) => ({ id: `stream:${s}`, kind: "stream" as const })), ...dataflows.map((d) => ({ id: d.id, kind: "dataflow" as const }))];
  const edges = dataflows.flatMap((d) => (d.spec.stream === undefined ? sourcesOf(d.spec) : [`stream:${d.spec.stream}`]).map((from) => ({ from, to: d.id })));
  return { nodes, edges };
}

/** The edges into `stage` from each partition of each upstream it reads (an upstream not among `dataflows` shows none). */
export function edgesInto(stage: DataflowStatusView, dataflows: readonly DataflowStatusView[]): EdgeView[] {
  const byId = new Map(dataflows.map((d) => [d.id, d]));
  return sourcesOf(stage.spec).flatMap((upstreamId) => {
    const upstream = byId.get(upstreamId);
    if (!upstream) return [];
    return upstream.primaries.flatMap((source, upstreamPartition) =>
      stage.primaries.map((target, partition): EdgeView => {
        const produced = source?.outputSeq ?? null;
        const delivered = source?.edges?.find((e) => e.dataflow === stage.id && e.partition === partition)?.delivered ?? null;
        const acknowledged = target ? (target.sources?.[sourceKey({ dataflow: upstreamId, partition: upstreamPartition })]?.hw ?? 0) : null;
        const lag = produced !== null && acknowledged !== null ? Math.max(0, produced - acknowledged) : null;
        return { upstream: upstreamId, upstreamPartition, partition, produced, delivered, acknowledged, lag };
      }),
    );
  });
}
