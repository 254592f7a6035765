/** Evicting every Durable Object loses nothing: results, status and dedup memory come back from storage. */
import { env } from "cloudflare:workers";
import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { COORDINATOR_NAME, directoryName, monitorName } from "../../shared/names.ts";
import { call, createDataflow, postEvents, results } from "../helpers/api.ts";

async function replicaNames(id: string): Promise<string[]> {
  const res = await call("GET", `/v1/dataflows/${id}`);
  const body = (await res.json()) as { dataflow: { partitions: { primary: string; standby: string | null }[] } };
  return body.dataflow.partitions.flatMap((p) => [p.primary, ...(p.standby ? [p.standby] : [])]);
}

describe("restart of every object", () => {
  it("evicting every replica, the registry, the monitor and the directory loses nothing and forgets no seq", async () => {
    // FLUX_CHECKPOINT_EVERY is 4 in tests, so state comes back from checkpoint plus log.
    const { id, stream } = await createDataflow();
    for (let seq = 1; seq <= 11; seq++) {
      const events = Array.from({ length: 5 }, (_, i) => ({ page: `p${(seq * 5 + i) % 9}`, ts: seq * 3_000 + i, bytes: seq + i }));
      expect((await postEvents(stream, "loader", seq, events)).status).toBe(200);
    }
    const before = await results(id);
    const statusBefore = (await (await call("GET", "/v1/status")).json()) as { dataflows: { id: string; partitions: { replicas: { lsn: number; checkpointLsn: number }[] }[] }[] };
    expect(before.length).toBeGreaterThan(5);
    // Every replica has a checkpoint, and some hold log above it: a restart uses both.
    const replicas = statusBefore.dataflows.find((d) => d.id === id)?.partitions.flatMap((p) => p.replicas) ?? [];
    expect(replicas).toHaveLength(8);
    expect(replicas.every((r) => r.checkpointLsn > 0)).toBe(true);
    expect(replicas.some((r) => r.lsn > r.checkpointLsn)).toBe(true);

    const names = await replicaNames(id);
    expect(names).toHaveLength(8);
    for (const name of names) await evictDurableObject(env.PARTITION_REPLICA.getByName(name));
    await evictDurableObject(env.COORDINATOR.getByName(COORDINATOR_NAME));
    await evictDurableObject(env.DATAFLOW_MONITOR.getByName(monitorName(id)));
    await evictDurableObject(env.STREAM_DIRECTORY.getByName(directoryName(stream)));

    expect(await results(id)).toEqual(before);
    // Load measures count since a replica was loaded (and between the monitor's probes): they start again; all else is as before.
    const withoutLoad = (status: unknown) => JSON.parse(JSON.stringify(status, (key: string, value: unknown) => (key === "recordsApplied" || key === "eventsPerSecond" ? undefined : value))) as unknown;
    expect(withoutLoad(await (await call("GET", "/v1/status")).json())).toEqual(withoutLoad(statusBefore));
    const resend = await postEvents(stream, "loader", 5, [{ page: `p${(25) % 9}`, ts: 15_000, bytes: 5 }]);
    expect(resend.status).toBe(200);
    expect(((await resend.json()) as { duplicate: boolean }).duplicate).toBe(true);
    expect(await results(id)).toEqual(before);
  });
});
