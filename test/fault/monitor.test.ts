/**
 * Issue 3 in workerd, beyond single failures: both replicas down (unavailable, then
 * resumed), a zombie primary fenced, a monitor evicted mid-takeover, and the admin
 * endpoint's access control.
 */
import { env } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { DataflowMonitor } from "../../durable-objects/dataflow-monitor.ts";
import { planMonitorTick } from "../../shared/monitor/plan-monitor-tick.ts";
import { partitionFor } from "../../shared/partitioner.ts";
import { DataflowRecordSchema } from "../../shared/wire/routing.ts";
import { call, createDataflow, postEvents } from "../helpers/api.ts";
import { expectExact, fault, faultSpec, monitorOf, postUntilAcked, routing, tick, tickUntilHealthy, tickUntilRetired, type Event } from "../helpers/fault-client.ts";

const onPartition = (partition: number, seq: number): Event[] =>
  ["a", "b", "c", "d", "e", "f"].filter((p) => partitionFor(p, 2) === partition).map((page) => ({ page, ts: seq * 10, bytes: seq }));

describe("both replicas of a partition down", () => {
  it("answers a 503 naming the partition, serves the others, and resumes by itself", async () => {
    const { id, stream } = await createDataflow(faultSpec);
    const acked: Event[][] = [];
    for (let seq = 1; seq <= 3; seq++) {
      await postUntilAcked(stream, "c", seq, [...onPartition(0, seq), ...onPartition(1, seq)]);
      acked.push([...onPartition(0, seq), ...onPartition(1, seq)]);
    }
    const { primary, standby } = (await routing(id))[0] ?? { primary: "", standby: "" };
    await fault(primary, "crash");
    await fault(standby ?? "", "crash");
    for (let i = 0; i < 3; i++) await tick();
    expect((await routing(id)).map((p) => p.status)).toEqual(["unavailable", "healthy"]);

    const refused = await postEvents(stream, "c", 4, onPartition(0, 4));
    expect(refused.status).toBe(503);
    const body = (await refused.json()) as { error: { message: string; details: { partition: number } } };
    expect(body.error.details.partition).toBe(0);
    expect(body.error.message).toContain("partition 0");
    expect(await postUntilAcked(stream, "other", 1, onPartition(1, 9), 1, 1)).toEqual([200]);
    acked.push(onPartition(1, 9));

    await fault(standby ?? "", "heal");
    await postUntilAcked(stream, "c", 4, onPartition(0, 4));
    acked.push(onPartition(0, 4));
    await tickUntilHealthy(id);
    await expectExact(id, stream, acked);
    await fault(primary, "heal");
    await tickUntilRetired(primary);
  });
});

describe("a monitor evicted mid-takeover", () => {
  it("completes the takeover from its stored routing on the next alarm", async () => {
    const { id, stream } = await createDataflow(faultSpec);
    for (let seq = 1; seq <= 3; seq++) await postUntilAcked(stream, "c", seq, onPartition(0, seq));
    const before = (await routing(id))[0];
    await fault(before?.primary ?? "", "crash");
    const monitor = monitorOf(id);
    // The first half of a tick: the takeover decided and persisted, no replica told yet.
    await runInDurableObject(monitor, async (_instance: DataflowMonitor, state) => {
      const record = DataflowRecordSchema.parse(state.storage.kv.get(`dataflow:${id}`));
      const failed = new Map([[before?.primary ?? "", { ok: false as const, error: "crashed" }]]);
      planMonitorTick(record, {}, failed, Date.now(), { failAfterMisses: 1, locationHints: [], missSpacingMs: 0 });
      state.storage.kv.put(`dataflow:${id}`, record);
    });
    await evictDurableObject(monitor);
    const promoted = (await routing(id))[0];
    expect(promoted?.primary).toBe(before?.standby);
    expect(await env.PARTITION_REPLICA.getByName(promoted?.primary ?? "").status()).toMatchObject({ role: "standby", epoch: 1 });

    await tick();
    expect(await env.PARTITION_REPLICA.getByName(promoted?.primary ?? "").status()).toMatchObject({ role: "primary" });
    await postUntilAcked(stream, "c", 4, onPartition(0, 4));
    await tickUntilHealthy(id);
    await expectExact(id, stream, [1, 2, 3, 4].map((seq) => onPartition(0, seq)));
  });
});

describe("the fault endpoint", () => {
  it("refuses a missing or wrong admin token (401) and the API token (403)", async () => {
    const { id } = await createDataflow(faultSpec);
    const name = (await routing(id))[0]?.primary ?? "";
    for (const [token, status, code, message] of [
      [null, 401, "UNAUTHORIZED", /missing bearer token/],
      ["wrong", 401, "UNAUTHORIZED", /wrong bearer token/],
      ["test-token", 403, "FORBIDDEN", /the API token cannot use \/v1\/admin; use FLUX_ADMIN_TOKEN/],
    ] as const) {
      const res = await fault(name, "crash", token);
      expect(res.status).toBe(status);
      const { error } = (await res.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe(code);
      expect(error.message).toMatch(message);
    }
    expect(await env.PARTITION_REPLICA.getByName(name).status()).toMatchObject({ role: "primary" });
  });

  it("rejects unknown replicas and unknown fault kinds", async () => {
    expect((await fault("nope/p0/g0", "crash")).status).toBe(404);
    const { id } = await createDataflow(faultSpec);
    const name = (await routing(id))[0]?.primary ?? "";
    expect((await fault(name, "explode")).status).toBe(400);
    expect((await call("POST", `/v1/admin/replicas/${encodeURIComponent(name)}/fault`, { kind: "crash", extra: 1 }, { authorization: "Bearer test-admin-token" })).status).toBe(400);
  });
});
