/**
 * Monitor behaviour beyond a single failure (issue 3): both replicas down, a monitor
 * that dies mid-takeover or mid-recovery, and the pure decisions themselves.
 */
import { describe, expect, it } from "vitest";
import { planMonitorTick } from "../../shared/monitor/plan-monitor-tick.ts";
import { partitionFor } from "../../shared/partitioner.ts";
import type { ProbeResult } from "../../shared/monitor/monitor-port.ts";
import type { HealthMap } from "../../shared/wire/routing.ts";
import { ClusterHarness, type Batch } from "../helpers/cluster-harness.ts";
import { record as makeRecord, spec } from "../helpers/fixtures.ts";

const batch = (seq: number, page = `k${seq % 5}`): Batch => ({ producer: "c", seq, events: [{ page, ts: seq * 100, bytes: seq }] });
/** Pages that land in partition 0 and in partition 1 of a 2-partition dataflow. */
const pageIn = (partition: number) => ["a", "b", "c", "d", "e", "f"].find((k) => partitionFor(k, 2) === partition) ?? "";
const P0 = pageIn(0);
const P1 = pageIn(1);

describe("both replicas of a partition down", () => {
  it("reports unavailable, keeps other partitions going, and resumes when a replica returns", async () => {
    const h = new ClusterHarness();
    for (let seq = 1; seq <= 5; seq++) await h.post(batch(seq));
    const { primary, standby } = h.record.routes[0] ?? { primary: "", standby: null };
    h.cluster.inject(primary, "crash");
    h.cluster.inject(standby ?? "", "crash");
    for (let i = 0; i < 4; i++) await h.tick();
    expect(h.record.routes[0]?.status).toBe("unavailable");
    expect(h.record.routes[1]?.status).toBe("healthy");
    await expect(h.postOnce(batch(6, P0))).rejects.toThrow(/partition 0/);
    await h.post(batch(7, P1), 1);

    h.cluster.inject(standby ?? "", "heal");
    await h.tick();
    expect(h.record.routes[0]?.primary).toBe(standby);
    expect(h.record.routes[0]?.status).not.toBe("unavailable");
    expect(h.record.events.map((e) => e.kind)).toContain("resumed");
    await h.post(batch(6, P0));
    await h.settle();
    expect(h.record.routes[0]?.status).toBe("healthy");
    await h.expectExactResults("after resuming");
    // A replaced replica that kept missing is probed ever more rarely (at most 64 s apart,
    // retired-probes.ts): once it answers, it is told to retire.
    h.cluster.inject(primary, "heal");
    for (let i = 0; i < 130 && h.cluster.host(primary).status()?.role !== "retired"; i++) await h.tick();
    expect(h.cluster.host(primary).status()?.role).toBe("retired");
    expect(h.record.routes[0]?.retired).not.toContain(primary);
  });
});

describe("a monitor that dies half-way", () => {
  it("finishes a takeover whose routing was saved but whose replicas were never told", async () => {
    const h = new ClusterHarness();
    for (let seq = 1; seq <= 5; seq++) await h.post(batch(seq));
    const old = h.record.routes[0]?.primary ?? "";
    h.cluster.inject(old, "crash");
    const realPort = h.monitorPort;
    // The coordinator persists the new routing, then dies before configuring anyone.
    h.monitorPort = { ...realPort, probe: realPort.probe, configure: async () => Promise.reject(new Error("monitor died")) };
    await h.tick();
    await h.tick();
    expect(h.record.routes[0]?.primary).not.toBe(old);
    const promoted = h.record.routes[0]?.primary ?? "";
    expect(h.cluster.host(promoted).status()?.role).toBe("standby");
    h.monitorPort = realPort;
    await h.tick();
    expect(h.cluster.host(promoted).status()).toMatchObject({ role: "primary", epoch: h.record.routes[0]?.epoch });
    for (let seq = 6; seq <= 12; seq++) await h.post(batch(seq));
    await h.settle();
    expect(h.record.routes[0]?.status).toBe("healthy");
    await h.expectExactResults("after a resumed takeover");
  });

  it("resumes a recovery interrupted at every step", async () => {
    const h = new ClusterHarness({}, 2);
    for (let seq = 1; seq <= 30; seq++) await h.post(batch(seq, `key${seq}`));
    h.cluster.inject(h.record.routes[0]?.standby ?? "", "crash");
    const realPort = h.monitorPort;
    let calls = 0;
    // Every third monitor call fails, as if the monitor were evicted mid-recovery each time.
    h.monitorPort = Object.fromEntries(
      Object.entries(realPort).map(([k, fn]: [string, (...a: unknown[]) => Promise<unknown>]) => [
        k,
        (...args: unknown[]) => (++calls % 3 === 0 ? Promise.reject(new Error("monitor died")) : fn.apply(realPort, args)),
      ]),
    ) as unknown as typeof realPort;
    for (let seq = 31; seq <= 60; seq++) {
      await h.post(batch(seq, `key${seq}`));
      await h.tick();
    }
    h.monitorPort = realPort;
    await h.settle();
    expect(h.record.routes[0]?.status).toBe("healthy");
    expect(h.record.events.map((e) => e.kind)).toContain("recovery-finished");
    await h.expectExactResults("after an interrupted recovery");
  });
});

describe("planMonitorTick", () => {
  const probe = (ok: boolean, lsn = 0, dataflowId = "df", recordsApplied = 0): ProbeResult =>
    ok
      ? { ok, status: { name: "", dataflowId, partition: 0, role: "primary", epoch: 1, hasStandby: true, standby: "s", holdLogAfterLsn: null, configVersion: 1, readers: [], lsn, appliedLsn: lsn, standbyAckLsn: 0, checkpointLsn: 0, outputSeq: 0, lateRecords: 0, openEntries: 0, checkpointChars: 0, recordsApplied } }
      : { ok, error: "timeout" };

  it("measures each replica's events per second between two answered probes; unknown after a restart or a miss", () => {
    const record = makeRecord("df");
    const health: HealthMap = {};
    const { primary = "" } = record.routes[0] ?? {};
    const tuning = { failAfterMisses: 3, locationHints: [], missSpacingMs: 1 };
    const rate = (atMs: number, result: ProbeResult) => {
      planMonitorTick(record, health, new Map([[primary, result]]), atMs, tuning);
      return health[primary]?.eventsPerSecond;
    };
    expect(rate(1000, probe(true, 1, "df", 100))).toBeNull();
    expect(rate(1500, probe(true, 2, "df", 600))).toBe(1000);
    expect(rate(3500, probe(true, 3, "df", 700))).toBe(50);
    // Restarted: its count began again.
    expect(rate(4000, probe(true, 4, "df", 10))).toBeNull();
    expect(rate(5000, probe(true, 5, "df", 2010))).toBe(2000);
    // A missed probe keeps the last rate; the next answer measures from the last one answered.
    expect(rate(5500, probe(false))).toBe(2000);
    expect(rate(6000, probe(true, 6, "df", 3010))).toBe(1000);
  });

  it("waits for the configured number of missed probes before acting", () => {
    const record = makeRecord("df");
    const health: HealthMap = {};
    const { primary = "", standby = "" } = record.routes[0] ?? {};
    const probes = new Map([[primary, probe(false)], [standby ?? "", probe(true)]]);
    expect(planMonitorTick(record, health, probes, 1, { failAfterMisses: 3, locationHints: [], missSpacingMs: 1 })).toBe(false);
    expect(planMonitorTick(record, health, probes, 2, { failAfterMisses: 3, locationHints: [], missSpacingMs: 1 })).toBe(false);
    expect(planMonitorTick(record, health, probes, 3, { failAfterMisses: 3, locationHints: [], missSpacingMs: 1 })).toBe(true);
    expect(record.routes[0]).toMatchObject({ epoch: 2, primary: standby, standby: null, status: "recovering", retired: [primary] });
  });

  it("counts misses closer together than the spacing once, so report-triggered probes cannot rush a takeover", () => {
    const record = makeRecord("df");
    const health: HealthMap = {};
    const { primary = "", standby = "" } = record.routes[0] ?? {};
    const probes = new Map([[primary, probe(false)], [standby ?? "", probe(true)]]);
    const tuning = { failAfterMisses: 2, locationHints: [], missSpacingMs: 250 };
    for (const at of [1000, 1010, 1100, 1200]) expect(planMonitorTick(record, health, probes, at, tuning)).toBe(false);
    expect(health[primary]?.misses).toBe(1);
    expect(planMonitorTick(record, health, probes, 1250, tuning)).toBe(true);
    expect(record.routes[0]?.primary).toBe(standby);
  });

  it("brings an unreplicated (R=1) partition back healthy, without seeding a standby", () => {
    const record = makeRecord("df", spec({ replication: 1 }));
    const health: HealthMap = {};
    const { primary = "" } = record.routes[0] ?? {};
    const tuning = { failAfterMisses: 1, locationHints: [], missSpacingMs: 1 };
    planMonitorTick(record, health, new Map([[primary, probe(false)]]), 1, tuning);
    expect(record.routes[0]?.status).toBe("unavailable");
    planMonitorTick(record, health, new Map([[primary, probe(true, 5)]]), 2, tuning);
    expect(record.routes[0]).toMatchObject({ status: "healthy", primary, standby: null, recovery: null });
  });

  it("treats a replica that answers without state, or with another dataflow's, as failed", () => {
    for (const answer of [{ ok: true as const, status: null }, probe(true, 0, "other")]) {
      const record = makeRecord("df");
      const health: HealthMap = {};
      const route = record.routes[0];
      const probes = new Map([[route?.primary ?? "", probe(true)], [route?.standby ?? "", answer]]);
      planMonitorTick(record, health, probes, 1, { failAfterMisses: 1, locationHints: [], missSpacingMs: 1 });
      expect(record.routes[0]?.standby).toBeNull();
      expect(record.events.map((e) => e.kind)).toEqual(["degraded", "recovery-started"]);
    }
  });

  it("places a fresh replica away from the survivor's location hint", () => {
    const record = makeRecord("df");
    const route = record.routes[0];
    if (!route) throw new Error("no route");
    route.hints[route.primary] = "weur";
    const probes = new Map([[route.primary, probe(true)], [route.standby ?? "", probe(false)]]);
    planMonitorTick(record, {}, probes, 1, { failAfterMisses: 1, locationHints: ["weur", "enam"], missSpacingMs: 1 });
    expect(route.recovery && route.hints[route.recovery.replica]).toBe("enam");
  });
});
