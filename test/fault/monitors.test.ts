/**
 * Issue 29 in workerd: each dataflow has its own monitor object. One monitor crashes in the
 * middle of a takeover (decided and stored, no replica told) and stays down while another
 * dataflow's primary fails: the other fails over on its own monitor alone and takes writes;
 * when the first monitor returns it finishes what it had started. Both end exact. And a
 * stage created and deleted while a replica of its upstream is down: both answer at once (the
 * upstream's monitor tells that replica later), and the upstream's replicas end with the right readers.
 */
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { DataflowMonitor } from "../../durable-objects/dataflow-monitor.ts";
import { planMonitorTick } from "../../shared/monitor/plan-monitor-tick.ts";
import { partitionFor } from "../../shared/partitioner.ts";
import { DataflowRecordSchema } from "../../shared/wire/routing.ts";
import { call, createDataflow, postEvents } from "../helpers/api.ts";
import { env } from "cloudflare:workers";
import { expectExact, fault, faultSpec, monitorOf, postUntilAcked, routing, tick, tickUntilHealthy, type Event } from "../helpers/fault-client.ts";

const onPartition = (partition: number, seq: number): Event[] =>
  ["a", "b", "c", "d", "e", "f"].filter((p) => partitionFor(p, 2) === partition).map((page) => ({ page, ts: seq * 10, bytes: seq }));

describe("monitors of two dataflows", () => {
  it("a monitor crashed mid-takeover holds back no other dataflow's fail-over, and finishes its own when it returns", async () => {
    const a = await createDataflow(faultSpec);
    const b = await createDataflow(faultSpec);
    for (let seq = 1; seq <= 3; seq++) {
      await postUntilAcked(a.stream, "c", seq, onPartition(0, seq));
      await postUntilAcked(b.stream, "c", seq, onPartition(0, seq));
    }
    const aBefore = (await routing(a.id))[0];
    const bBefore = (await routing(b.id))[0];
    await fault(bBefore?.primary ?? "", "crash");
    // B's monitor decides its takeover and stores it, then crashes before telling any replica.
    await runInDurableObject(monitorOf(b.id), async (_instance: DataflowMonitor, state) => {
      const record = DataflowRecordSchema.parse(state.storage.kv.get(`dataflow:${b.id}`));
      const failed = new Map([[bBefore?.primary ?? "", { ok: false as const, error: "crashed" }]]);
      planMonitorTick(record, {}, failed, Date.now(), { failAfterMisses: 1, locationHints: [], missSpacingMs: 0 });
      state.storage.kv.put(`dataflow:${b.id}`, record);
    });
    await evictDurableObject(monitorOf(b.id));

    // A's primary crashes while B's monitor is down (its alarm does not run): A's monitor alone fails A over.
    await fault(aBefore?.primary ?? "", "crash");
    for (let i = 0; i < 10 && (await routing(a.id))[0]?.primary === aBefore?.primary; i++) await tick(a.id);
    // Promoted, and already recovering (a fresh standby attached under a newer epoch).
    expect((await routing(a.id))[0]?.primary).toBe(aBefore?.standby);
    let aStatus = 0;
    for (let i = 0; i < 10 && aStatus !== 200; i++) {
      aStatus = (await postEvents(a.stream, "c", 4, onPartition(0, 4))).status;
      if (aStatus !== 200) await tick(a.id);
    }
    expect(aStatus).toBe(200);
    // B's routing names its new primary, which was never told: B's writes wait for B's own monitor.
    expect((await routing(b.id))[0]?.primary).toBe(bBefore?.standby);
    expect((await postEvents(b.stream, "c", 4, onPartition(0, 4))).status).toBe(503);

    // B's monitor is back: it finishes the takeover it had stored, and both recover in full.
    await postUntilAcked(b.stream, "c", 4, onPartition(0, 4));
    await tickUntilHealthy(a.id);
    await tickUntilHealthy(b.id);
    const batches = [1, 2, 3, 4].map((seq) => onPartition(0, seq));
    await expectExact(a.id, a.stream, batches);
    await expectExact(b.id, b.stream, batches);
  });
});

describe("a stage linked while a replica of its upstream is down", () => {
  it("is created and deleted at once; the upstream's monitor tells the replica when it returns", async () => {
    const up = await createDataflow({ partitions: 1 });
    const standby = (await routing(up.id))[0]?.standby ?? "";
    await fault(standby, "hang");
    const stage = { from: up.id, key: "key", partitions: 1, window: { kind: "tumbling", sizeMs: 60_000 }, aggregates: { n: { op: "sum", field: "values.n" } } };
    expect((await call("PUT", `/v1/dataflows/${up.id}-stage`, stage)).status).toBe(201);
    expect((await call("DELETE", `/v1/dataflows/${up.id}-stage`)).status).toBe(200);
    expect((await call("PUT", `/v1/dataflows/${up.id}-stage2`, stage)).status).toBe(201);
    await fault(standby, "heal");
    await tickUntilHealthy(up.id);
    for (let i = 0; i < 5 && (await env.PARTITION_REPLICA.getByName((await routing(up.id))[0]?.standby ?? "").status())?.readers.join() !== `${up.id}-stage2`; i++) await tick(up.id);
    for (const replica of [(await routing(up.id))[0]?.primary, (await routing(up.id))[0]?.standby]) {
      expect((await env.PARTITION_REPLICA.getByName(replica ?? "").status())?.readers).toEqual([`${up.id}-stage2`]);
    }
  });
});
