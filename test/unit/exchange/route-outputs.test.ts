/** Upstream results as downstream events (issue 27): routed by the downstream's spec, event time the window end. */
import { describe, expect, it } from "vitest";
import { outputEvent, routeOutputs } from "../../../shared/exchange/route-outputs.ts";
import { upstreamWatermark } from "../../../shared/exchange/upstream-watermark.ts";
import { partitionFor } from "../../../shared/partitioner.ts";
import { DataflowSpecSchema } from "../../../shared/dataflow-checks/dataflow-spec-schema.ts";
import type { WindowResult } from "../../../shared/wire/window-result.ts";

const spec = DataflowSpecSchema.parse({
  from: "top-pages",
  key: "values.site",
  partitions: 4,
  filter: { field: "values.n", op: "ge", value: 2 },
  window: { kind: "tumbling", sizeMs: 60_000 },
  aggregates: { views: { op: "sum", field: "values.n" } },
});
const result = (key: string, n: number | string, site: string): WindowResult => ({ key, windowStartMs: 0, windowEndMs: 60_000, values: { n, site }, closed: true });

describe("routeOutputs", () => {
  it("routes each result by the downstream key, timed at its window's last millisecond", () => {
    const [routed] = routeOutputs(spec, [{ outputSeq: 7, result: result("/a", 5, "s1") }], 256, "top-pages");
    expect(routed).toEqual({ outputSeq: 7, partition: partitionFor("s1", 4), record: ["s1", 59_999, 5] });
  });

  it("routes a filtered result nowhere, and names the problem of one it cannot read", () => {
    const routed = routeOutputs(spec, [{ outputSeq: 1, result: result("/a", 1, "s1") }, { outputSeq: 2, result: result("/b", 3, "") }], 256, "top-pages");
    expect(routed[0]).toEqual({ outputSeq: 1, partition: null, record: null });
    expect(routed[1]).toEqual({ outputSeq: 2, partition: null, record: null, problem: "values.site: key must not be empty" });
  });

  it("drops `closed` from the event", () => {
    expect(outputEvent(result("/a", 1, "s"))).toEqual({ key: "/a", windowStartMs: 0, windowEndMs: 60_000, values: { n: 1, site: "s" } });
  });
});

describe("upstreamWatermark", () => {
  it("is the operator's watermark, held below the window a spread close has not finished", () => {
    expect(upstreamWatermark({ watermarkMs: null, closing: false, firstDueEndMs: null })).toBeNull();
    expect(upstreamWatermark({ watermarkMs: 400, closing: false, firstDueEndMs: null })).toBe(400);
    expect(upstreamWatermark({ watermarkMs: 400, closing: true, firstDueEndMs: 300 })).toBe(299);
    expect(upstreamWatermark({ watermarkMs: 400, closing: true, firstDueEndMs: null })).toBeNull();
  });
});
