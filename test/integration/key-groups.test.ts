/**
 * Key groups stored per dataflow (issue 28, deliverable 1): a dataflow created now hashes
 * its keys to at least 256 groups (a multiple of P), group g on partition g mod P, so keys
 * start where FNV-1a mod P put them; one stored before has no table and keeps 16 groups per
 * partition. Routers, readers and `/v1/status` all go by the stored table, owners included.
 */
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { keyGroupOf } from "../../shared/keygroups/key-groups.ts";
import { partitionFor } from "../../shared/partitioner.ts";
import { call, clicksSpec, postEvents, results } from "../helpers/api.ts";
import { monitorOf } from "../helpers/fault-client.ts";

const KEYS = Array.from({ length: 12 }, (_, i) => `/page-${i}`);

interface StatusBody {
  dataflows: { id: string; keyGroups: number; partitions: { partition: number; keyGroups: number; replicas: { role?: string; openEntries?: number | null; checkpointChars?: number; checkpointLsn?: number; eventsPerSecond: number | null }[] }[] }[];
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

async function statusOf(id: string): Promise<StatusBody["dataflows"][number]> {
  const body = (await (await call("GET", "/v1/status")).json()) as StatusBody;
  const dataflow = body.dataflows.find((d) => d.id === id);
  if (!dataflow) throw new Error(`status lists no ${id}`);
  return dataflow;
}

async function groupsShown(id: string): Promise<{ total: number; perPartition: number[] }> {
  const dataflow = await statusOf(id);
  return { total: dataflow.keyGroups, perPartition: dataflow.partitions.map((p) => p.keyGroups) };
}

/** Rewrites `id`'s stored record as `change` says (before any event reaches it), and lets every cache expire. */
async function rewriteRecord(id: string, change: (record: Record<string, unknown>) => void): Promise<void> {
  await runInDurableObject(monitorOf(id), (_instance, state) => {
    const record = state.storage.kv.get<Record<string, unknown>>(`dataflow:${id}`);
    if (!record) throw new Error("the monitor holds no record");
    change(record);
    state.storage.kv.put(`dataflow:${id}`, record);
  });
  await evictDurableObject(monitorOf(id));
  // Routers' and readers' caches (1 s here) expire: the next post reads the record as stored.
  await new Promise((resolve) => setTimeout(resolve, 1_100));
}

describe("key groups", () => {
  it("puts a new dataflow's keys on their group's partition (258 groups at P=3, g mod P: FNV-1a mod P) and shows the groups in the status", async () => {
    expect((await call("PUT", "/v1/dataflows/kg-new", clicksSpec("kg-new-clicks", { partitions: 3 }))).status).toBe(201);
    const placed = await placements("kg-new-clicks", "p");
    for (const [page, partition] of placed) expect([partition, partition], page).toEqual([keyGroupOf(page, 258) % 3, partitionFor(page, 3)]);
    expect(new Set(placed.values()).size).toBe(3);
    // A reader asking for one key asks the partition that owns it.
    for (const page of KEYS) expect((await results("kg-new", `?key=${encodeURIComponent(page)}`)).map((r) => [r.key, r.values.n]), page).toEqual([[page, 1]]);
    expect(await groupsShown("kg-new")).toEqual({ total: 258, perPartition: [86, 86, 86] });
    // Each replica's load: one open (window, key) entry per key its partition holds (one window here), and
    // the size of its last checkpoint, if it took one.
    const perPartition = [0, 1, 2].map((p) => KEYS.filter((page) => placed.get(page) === p).length);
    const shown = (await statusOf("kg-new")).partitions.map((p) => p.replicas.map((r) => [r.role, r.openEntries, (r.checkpointLsn ?? 0) > 0 === (r.checkpointChars ?? 0) > 0]));
    expect(shown).toEqual(perPartition.map((n) => [["primary", n, true], ["standby", n, true]]));
    const summary = (await (await call("GET", "/v1/status?view=summary")).json()) as { dataflows: { id: string; partitions: string[] }[] };
    const lines = summary.dataflows.find((d) => d.id === "kg-new")?.partitions ?? [];
    expect(lines.map((line) => line.match(/^p\d healthy epoch \d+, (\d+) key groups: primary \S+ lsn \d+ \(applied \d+, (\d+) open entries(?:, \d+ events\/s)?\)/)?.slice(1).map(Number))).toEqual([0, 1, 2].map((p) => [86, perPartition[p]]));
  });

  it("shows each replica's events per second, measured by its monitor between two probes", async () => {
    expect((await call("PUT", "/v1/dataflows/kg-rate", clicksSpec("kg-rate-clicks", { partitions: 2 }))).status).toBe(201);
    const rates = async () => (await statusOf("kg-rate")).partitions.map((p) => p.replicas.map((r) => r.eventsPerSecond));
    await runDurableObjectAlarm(monitorOf("kg-rate"));
    await placements("kg-rate-clicks", "p");
    await runDurableObjectAlarm(monitorOf("kg-rate"));
    const shown = await rates();
    for (const replicas of shown) for (const rate of replicas) expect(typeof rate).toBe("number");
    // Both replicas of a partition apply the same records; every key landed somewhere.
    expect(shown.reduce((n, [primary]) => n + (primary ?? 0), 0)).toBeGreaterThan(0);
    const summary = (await (await call("GET", "/v1/status?view=summary")).json()) as { dataflows: { id: string; partitions: string[] }[] };
    for (const line of summary.dataflows.find((d) => d.id === "kg-rate")?.partitions ?? []) expect(line).toMatch(/open entries, \d+ events\/s\); standby /);
  });

  it("routes writes and one-key reads by the owners the stored table names", async () => {
    const stream = "kg-owned-clicks";
    expect((await call("PUT", "/v1/dataflows/kg-owned", clicksSpec(stream, { partitions: 3 }))).status).toBe(201);
    // Every group on partition 2, as a table the move steps will write looks.
    await rewriteRecord("kg-owned", (record) => void (record.keyGroups = { groups: 258, owners: Array.from({ length: 258 }, () => 2) }));
    const placed = await placements(stream, "p");
    expect([...new Set(placed.values())]).toEqual([2]);
    for (const page of KEYS) expect((await results("kg-owned", `?key=${encodeURIComponent(page)}`)).map((r) => r.key), page).toEqual([page]);
    expect(await groupsShown("kg-owned")).toEqual({ total: 258, perPartition: [0, 0, 258] });
  });

  it("keeps a dataflow stored before key groups were stored on 16 groups per partition: its keys stay where FNV-1a mod P put them", async () => {
    const stream = "kg-old-clicks";
    expect((await call("PUT", "/v1/dataflows/kg-old", clicksSpec(stream, { partitions: 3 }))).status).toBe(201);
    // As stored before issue 28: no key-group table in the record.
    await rewriteRecord("kg-old", (record) => void delete record.keyGroups);
    const placed = await placements(stream, "p");
    for (const [page, partition] of placed) expect(partition, page).toBe(partitionFor(page, 3));
    for (const page of KEYS) expect((await results("kg-old", `?key=${encodeURIComponent(page)}`)).map((r) => r.key), page).toEqual([page]);
    expect(await groupsShown("kg-old")).toEqual({ total: 48, perPartition: [16, 16, 16] });
  });
});
