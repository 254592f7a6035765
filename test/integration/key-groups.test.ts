/**
 * Key groups stored per dataflow (issue 28, deliverable 1): a dataflow created now hashes
 * its keys to 256 groups, group g on partition g mod P, whatever P; one stored before has no
 * table and keeps 16 groups per partition, so its keys stay where FNV-1a mod P put them.
 * Routers, readers and `/v1/status` all go by the stored table.
 */
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { KEY_GROUPS, keyGroupOf } from "../../shared/keygroups/key-groups.ts";
import { partitionFor } from "../../shared/partitioner.ts";
import { call, clicksSpec, postEvents, results } from "../helpers/api.ts";
import { monitorOf } from "../helpers/fault-client.ts";

const KEYS = Array.from({ length: 12 }, (_, i) => `/page-${i}`);

interface StatusBody {
  dataflows: { id: string; keyGroups: number; partitions: { partition: number; keyGroups: number }[] }[];
}

/** The partition each key's one-event batch was acknowledged by. */
async function placements(stream: string, producer: string): Promise<Map<string, number>> {
  const placed = new Map<string, number>();
  for (const [i, page] of KEYS.entries()) {
    const res = await postEvents(stream, producer, i + 1, [{ page, ts: 1_000, bytes: 1 }]);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { dataflows: { partitions: { partition: number }[] }[] };
    const acked = body.dataflows[0]?.partitions ?? [];
    expect(acked).toHaveLength(1);
    placed.set(page, acked[0]?.partition ?? -1);
  }
  return placed;
}

async function groupsShown(id: string): Promise<{ total: number; perPartition: number[] }> {
  const body = (await (await call("GET", "/v1/status")).json()) as StatusBody;
  const dataflow = body.dataflows.find((d) => d.id === id);
  if (!dataflow) throw new Error(`status lists no ${id}`);
  return { total: dataflow.keyGroups, perPartition: dataflow.partitions.map((p) => p.keyGroups) };
}

describe("key groups", () => {
  it("puts a new dataflow's keys on their group's partition (256 groups, g mod P) and shows the groups in the status", async () => {
    expect((await call("PUT", "/v1/dataflows/kg-new", clicksSpec("kg-new-clicks", { partitions: 3 }))).status).toBe(201);
    const placed = await placements("kg-new-clicks", "p");
    for (const [page, partition] of placed) expect(partition, page).toBe(keyGroupOf(page, KEY_GROUPS) % 3);
    // Not FNV-1a mod 3 for every key: 256 is no multiple of 3.
    expect(KEYS.some((page) => placed.get(page) !== partitionFor(page, 3))).toBe(true);
    // A reader asking for one key asks the partition that owns it.
    for (const page of KEYS) expect((await results("kg-new", `?key=${encodeURIComponent(page)}`)).map((r) => [r.key, r.values.n]), page).toEqual([[page, 1]]);
    expect(await groupsShown("kg-new")).toEqual({ total: 256, perPartition: [86, 85, 85] });
  });

  it("keeps a dataflow stored before key groups were stored on 16 groups per partition: its keys stay where FNV-1a mod P put them", async () => {
    const stream = "kg-old-clicks";
    expect((await call("PUT", "/v1/dataflows/kg-old", clicksSpec(stream, { partitions: 3 }))).status).toBe(201);
    // As stored before issue 28: no key-group table in the record.
    await runInDurableObject(monitorOf("kg-old"), (_instance, state) => {
      const record = state.storage.kv.get<Record<string, unknown>>("dataflow:kg-old");
      if (!record) throw new Error("the monitor holds no record");
      delete record.keyGroups;
      state.storage.kv.put("dataflow:kg-old", record);
    });
    await evictDurableObject(monitorOf("kg-old"));
    // Routers' and readers' caches (1 s here) expire: the next post reads the record as stored.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const placed = await placements(stream, "p");
    for (const [page, partition] of placed) expect(partition, page).toBe(partitionFor(page, 3));
    for (const page of KEYS) expect((await results("kg-old", `?key=${encodeURIComponent(page)}`)).map((r) => r.key), page).toEqual([page]);
    expect(await groupsShown("kg-old")).toEqual({ total: 48, perPartition: [16, 16, 16] });
  });
});
