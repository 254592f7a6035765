/** Pure pieces of the control plane that scales out (issue 29): names and the readers' record cache. */
import { describe, expect, it } from "vitest";
import { dataflowOfReplica, replicaName } from "../../shared/names.ts";
import { planDataflow } from "../../shared/plan-dataflow.ts";
import { DataflowCache } from "../../shared/router/dataflow-cache.ts";
import { DataflowSpecSchema } from "../../shared/dataflow-checks/dataflow-spec-schema.ts";

const spec = DataflowSpecSchema.parse({ stream: "s", key: "k", window: { kind: "tumbling", sizeMs: 1000 }, aggregates: { n: { op: "count" } }, partitions: 2 });

describe("names", () => {
  it("finds the dataflow of every replica name, whatever the id", () => {
    for (const id of ["df", "a.b-c_d", "x".repeat(64), "_1"]) {
      for (const [partition, generation] of [[0, 0], [3, 1], [15, 12]] as const) expect(dataflowOfReplica(replicaName(id, partition, generation))).toBe(id);
    }
  });
});

describe("the readers' dataflow cache", () => {
  const record = planDataflow("df", spec, 0);

  it("serves a record until it is ttl old, never a miss", () => {
    const cache = new DataflowCache(1_000);
    expect(cache.get("df", 0)).toBeUndefined();
    cache.set("df", record, 100);
    expect(cache.get("df", 1_099)).toBe(record);
    expect(cache.get("df", 1_100)).toBeUndefined();
    cache.set("gone", null, 0);
    expect(cache.get("gone", 0)).toBeUndefined();
  });

  it("drops a record a lookup no longer finds, and caches nothing with ttl 0", () => {
    const cache = new DataflowCache(1_000);
    cache.set("df", record, 0);
    cache.set("df", null, 10);
    expect(cache.get("df", 20)).toBeUndefined();
    const off = new DataflowCache(0);
    off.set("df", record, 0);
    expect(off.get("df", 0)).toBeUndefined();
  });
});
