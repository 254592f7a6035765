/** The pipeline as /v1/status shows it (issue 27): nodes and edges, and per edge produced, delivered, acknowledged and lag. */
import { describe, expect, it } from "vitest";
import { edgesInto, pipelineOf, type DataflowStatusView } from "../../../shared/stages/pipeline-status.ts";
import type { DownstreamProgress, EdgeStatus } from "../../../shared/wire/exchange.ts";
import type { ReplicaStatus } from "../../../shared/wire/replica-rpc.ts";

/** A primary's status with `outputSeq` outputs and, as given, a stage's sources or an upstream's edges. */
function primary(dataflowId: string, partition: number, outputSeq: number, extra: { sources?: DownstreamProgress; edges?: EdgeStatus[] } = {}): ReplicaStatus {
  return {
    name: `${dataflowId}-${partition}`, dataflowId, partition, role: "primary", epoch: 1, hasStandby: true, standby: `${dataflowId}-${partition}s`,
    holdLogAfterLsn: null, configVersion: 1, lsn: 10, appliedLsn: 10, standbyAckLsn: 10, checkpointLsn: 0, outputSeq, lateRecords: 0, openEntries: 0, checkpointChars: 0, recordsApplied: 0, readers: [],
    ...extra,
  };
}
const progress = (hw: number, partitions = 2): DownstreamProgress[string] => ({ hw, watermarkMs: null, partitions });

describe("pipelineOf", () => {
  it("has a node per stream read and per dataflow, and an edge per thing each reads", () => {
    const dataflows: DataflowStatusView[] = [
      { id: "views", spec: { stream: "clicks" }, primaries: [] },
      { id: "errors", spec: { stream: "app-logs" }, primaries: [] },
      { id: "top", spec: { from: "views" }, primaries: [] },
      { id: "both", spec: { from: ["views", "errors"] }, primaries: [] },
      { id: "sessions", spec: { stream: "clicks" }, primaries: [] },
    ];
    expect(pipelineOf(dataflows)).toEqual({
      nodes: [
        { id: "stream:app-logs", kind: "stream" },
        { id: "stream:clicks", kind: "stream" },
        { id: "views", kind: "dataflow" },
        { id: "errors", kind: "dataflow" },
        { id: "top", kind: "dataflow" },
        { id: "both", kind: "dataflow" },
        { id: "sessions", kind: "dataflow" },
      ],
      edges: [
        { from: "stream:clicks", to: "views" },
        { from: "stream:app-logs", to: "errors" },
        { from: "views", to: "top" },
        { from: "views", to: "both" },
        { from: "errors", to: "both" },
        { from: "stream:clicks", to: "sessions" },
      ],
    });
  });

  it("names a stream node so that it cannot clash with a dataflow of the same name", () => {
    const { nodes } = pipelineOf([{ id: "clicks", spec: { stream: "clicks" }, primaries: [] }]);
    expect(nodes.map((n) => n.id)).toEqual(["stream:clicks", "clicks"]);
  });

  it("is empty without dataflows", () => {
    expect(pipelineOf([])).toEqual({ nodes: [], edges: [] });
  });
});

describe("edgesInto", () => {
  const up: DataflowStatusView = {
    id: "up",
    spec: { stream: "clicks" },
    primaries: [
      primary("up", 0, 12, { edges: [{ dataflow: "down", partition: 0, delivered: 12, acknowledged: 9 }, { dataflow: "down", partition: 1, delivered: 7, acknowledged: 7 }] }),
      primary("up", 1, 5),
    ],
  };
  const down: DataflowStatusView = {
    id: "down",
    spec: { from: "up" },
    primaries: [primary("down", 0, 0, { sources: { "up/0": progress(9), "up/1": progress(5) } }), primary("down", 1, 0, { sources: { "up/0": progress(7) } })],
  };

  it("lists an edge per upstream partition and stage partition, with produced, delivered, acknowledged and lag", () => {
    expect(edgesInto(down, [up, down])).toEqual([
      { upstream: "up", upstreamPartition: 0, partition: 0, produced: 12, delivered: 12, acknowledged: 9, lag: 3 },
      { upstream: "up", upstreamPartition: 0, partition: 1, produced: 12, delivered: 7, acknowledged: 7, lag: 5 },
      { upstream: "up", upstreamPartition: 1, partition: 0, produced: 5, delivered: null, acknowledged: 5, lag: 0 },
      { upstream: "up", upstreamPartition: 1, partition: 1, produced: 5, delivered: null, acknowledged: 0, lag: 5 },
    ]);
  });

  it("shows null counts where the primary holding them did not answer", () => {
    const silentUp: DataflowStatusView = { ...up, primaries: [null, up.primaries[1] ?? null] };
    const silentDown: DataflowStatusView = { ...down, primaries: [down.primaries[0] ?? null, null] };
    expect(edgesInto(silentDown, [silentUp, silentDown])).toEqual([
      { upstream: "up", upstreamPartition: 0, partition: 0, produced: null, delivered: null, acknowledged: 9, lag: null },
      { upstream: "up", upstreamPartition: 0, partition: 1, produced: null, delivered: null, acknowledged: null, lag: null },
      { upstream: "up", upstreamPartition: 1, partition: 0, produced: 5, delivered: null, acknowledged: 5, lag: 0 },
      { upstream: "up", upstreamPartition: 1, partition: 1, produced: 5, delivered: null, acknowledged: null, lag: null },
    ]);
  });

  it("counts a stage that holds nothing of a source yet as acknowledging 0", () => {
    const fresh: DataflowStatusView = { id: "down", spec: { from: "up" }, primaries: [primary("down", 0, 0)] };
    expect(edgesInto(fresh, [up]).map((e) => [e.upstreamPartition, e.acknowledged, e.lag])).toEqual([[0, 0, 12], [1, 0, 5]]);
  });

  it("takes delivered counts only from edges to this stage", () => {
    const other: DataflowStatusView = { id: "other", spec: { from: "up" }, primaries: [primary("other", 0, 0)] };
    expect(edgesInto(other, [up]).map((e) => e.delivered)).toEqual([null, null]);
  });

  it("shows edges from each upstream of a union, and none from an upstream it was not given", () => {
    const side: DataflowStatusView = { id: "side", spec: { stream: "x" }, primaries: [primary("side", 0, 4)] };
    const union: DataflowStatusView = { id: "union", spec: { from: ["up", "side", "gone"] }, primaries: [primary("union", 0, 0, { sources: { "side/0": progress(4, 1) } })] };
    expect(edgesInto(union, [up, side]).map((e) => [e.upstream, e.upstreamPartition, e.produced, e.acknowledged, e.lag])).toEqual([
      ["up", 0, 12, 0, 12],
      ["up", 1, 5, 0, 5],
      ["side", 0, 4, 4, 0],
    ]);
  });

  it("has no edges into a dataflow that reads a stream", () => {
    expect(edgesInto(up, [up, down])).toEqual([]);
  });
});
