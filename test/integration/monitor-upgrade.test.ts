/**
 * Probe history stored by an older version that no longer parses must not stop the
 * monitor: it is soft state, dropped and rebuilt by the next probes.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, createDataflow } from "../helpers/api.ts";
import { monitorOf, tick } from "../helpers/fault-client.ts";

describe("a monitor after an upgrade", () => {
  it("drops unparsable probe history and keeps monitoring", async () => {
    const { id } = await createDataflow({ partitions: 1 });
    await runInDurableObject(monitorOf(id), (_instance, state) => {
      state.storage.kv.put(`health:${id}`, { [`${id}/p0/g0`]: { misses: "three", last: { v: 0 } } });
    });
    await tick();
    const status = (await (await call("GET", "/v1/status")).json()) as { dataflows: { id: string; partitions: { replicas: { missedProbes: number; lastHeartbeat: string | null }[] }[] }[] };
    const replicas = status.dataflows.find((d) => d.id === id)?.partitions[0]?.replicas ?? [];
    expect(replicas.length).toBe(2);
    for (const replica of replicas) expect(replica).toMatchObject({ missedProbes: 0, lastHeartbeat: expect.any(String) });
  });
});
