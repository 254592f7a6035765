/** Upstream results as downstream events (issue 27): routed by the downstream's spec, event time the window end. */
import { describe, expect, it } from "vitest";
import { outputEvent, routeOutputs } from "../../../shared/exchange/route-outputs.ts";
import { upstreamWatermark } from "../../../shared/exchange/upstream-watermark.ts";
import { partitionFor } from "../../../shared/partitioner.ts";
import { DataflowSpecSchema } from "../../../shared/dataflow-checks/dataflow-spec-schema.ts";
import type { WindowResult } from "../../../shared/wire/window-result.ts";
import { defaultKeyGroupMap } from "../../../shared/keygroups/key-groups.ts";

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
    const [routed] = routeOutputs(spec, defaultKeyGroupMap(spec.partitions), [{ outputSeq: 7, result: result("/a", 5, "s1") }], 256, { id: "top-pages", key: "page" });
    expect(routed).toEqual({ outputSeq: 7, partition: partitionFor("s1", 4), record: ["s1", 59_999, 5] });
  });

  it("routes a filtered result nowhere, and names the problem of one it cannot read", () => {
    const routed = routeOutputs(spec, defaultKeyGroupMap(spec.partitions), [{ outputSeq: 1, result: result("/a", 1, "s1") }, { outputSeq: 2, result: result("/b", 3, "") }], 256, { id: "top-pages", key: "page" });
    expect(routed[0]).toEqual({ outputSeq: 1, partition: null, record: null });
    expect(routed[1]).toEqual({ outputSeq: 2, partition: null, record: null, problem: "values.site: key must not be empty" });
  });

  it("drops `closed` from the event, and gives the upstream key's fields under group", () => {
    expect(outputEvent(result("/a", 1, "s"), "page")).toEqual({ key: "/a", group: { page: "/a" }, windowStartMs: 0, windowEndMs: 60_000, values: { n: 1, site: "s" } });
    const composite = outputEvent(result('["10.0.1.0/24","10.0.1.7",443]', 1, "s"), ["subnet", "flow.dst", "port"]);
    expect(JSON.parse(JSON.stringify(composite.group))).toEqual({ subnet: "10.0.1.0/24", flow: { dst: "10.0.1.7" }, port: "443" });
    expect(Object.getPrototypeOf(composite.group), "no field name reaches a prototype").toBeNull();
    // A list key that does not parse as one splits into nothing: a stage reading group.* then routes it nowhere, with the problem.
    expect(outputEvent(result("not json", 1, "s"), ["a", "b"]).group).toEqual({});
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
