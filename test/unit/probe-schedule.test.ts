/**
 * When the monitor probes (issue 12, deliverable 6): the pure schedule decisions, what of
 * the probe history is worth a write, and the coordinator's alarm step over a memory
 * cluster, counting probes and writes across an idle stretch.
 */
import { describe, expect, it } from "vitest";
import { durableHealth } from "../../shared/monitor/durable-health.ts";
import { freshClock, isDue, MonitorSchedule, nextProbeAtMs, observeTick, type ScheduleTuning } from "../../shared/monitor/probe-schedule.ts";
import { runDueTicks, type DueTickHost } from "../../shared/monitor/run-due-ticks.ts";
import type { ReplicaStatus } from "../../shared/wire/replica-rpc.ts";
import { DataflowRecordSchema, type DataflowRecord, type HealthMap } from "../../shared/wire/routing.ts";
import { record as makeRecord, spec } from "../helpers/fixtures.ts";
import { FAIL_ON_MONITOR_ERROR, MemoryCluster } from "../helpers/memory-cluster.ts";

const tuning: ScheduleTuning = { heartbeatMs: 500, watchProbeMs: 500, idleProbeMs: 60_000, idleAfterMs: 10_000, missSpacingMs: 250 };

const status = (name: string, lsn: number): ReplicaStatus => ({
  name, dataflowId: "df", partition: 0, role: "primary", epoch: 1, hasStandby: true, standby: "s", holdLogAfterLsn: null,
  configVersion: 1, readers: [], lsn, appliedLsn: lsn, standbyAckLsn: lsn, checkpointLsn: 0, outputSeq: 0, lateRecords: 0, openEntries: 0, checkpointChars: 0, recordsApplied: 0,
});

/** Health as if every replica of `record` answered at `atMs` with `lsn` (misses: `missing` missed). */
function healthOf(record: DataflowRecord, lsn: number, atMs: number, missing: string[] = []): HealthMap {
  const names = record.routes.flatMap((r) => [r.primary, ...(r.standby ? [r.standby] : [])]);
  return Object.fromEntries(
    names.map((name) => [name, missing.includes(name) ? { misses: 1, lastOkAtMs: null, lastMissAtMs: atMs, last: null, eventsPerSecond: null } : { misses: 0, lastOkAtMs: atMs, lastMissAtMs: null, last: status(name, lsn), eventsPerSecond: null }]),
  );
}

describe("the probe schedule", () => {
  const record = makeRecord("df", spec({ partitions: 2 }));

  it("probes an active dataflow every heartbeat, and a new one at once", () => {
    expect(nextProbeAtMs(freshClock(null), record, {}, null, tuning)).toBe(Number.NEGATIVE_INFINITY);
    const clock = observeTick(freshClock(null), record, healthOf(record, 5, 1_000), 1_000, tuning);
    expect(clock.idle).toBe(false);
    expect(nextProbeAtMs(clock, record, healthOf(record, 5, 1_000), null, tuning)).toBe(1_500);
  });

  it("goes idle once no LSN moved for idleAfterMs, then probes after as long again as it was quiet, at most idleProbeMs apart", () => {
    let clock = observeTick(freshClock(null), record, healthOf(record, 5, 0), 0, tuning);
    for (let at = 500; at < 10_000; at += 500) {
      clock = observeTick(clock, record, healthOf(record, 5, at), at, tuning);
      expect(clock.idle, `at ${at} ms`).toBe(false);
    }
    const probes: number[] = [];
    for (let at = 10_000; at < 300_000; at = nextProbeAtMs(clock, record, healthOf(record, 5, at), null, tuning)) {
      clock = observeTick(clock, record, healthOf(record, 5, at), at, tuning);
      expect(clock.idle).toBe(true);
      probes.push(at);
    }
    expect(probes).toEqual([10_000, 20_000, 40_000, 80_000, 140_000, 200_000, 260_000]);
  });

  it("stays idle when a replica reloaded after hibernating answers with its stable LSN behind and then caught up", () => {
    let clock = observeTick(freshClock(null), record, healthOf(record, 5, 0), 0, tuning);
    clock = observeTick(clock, record, healthOf(record, 5, 10_000), 10_000, tuning);
    expect(clock.idle).toBe(true);
    // Reloaded: the stored applied LSN lagged (progress-durability.ts), so it replays to 5 again.
    const reloaded = healthOf(record, 5, 20_000);
    const first = Object.values(reloaded)[0];
    if (first?.last) first.last = { ...first.last, appliedLsn: 2, standbyAckLsn: 2 };
    clock = observeTick(clock, record, reloaded, 20_000, tuning);
    expect(clock.idle).toBe(true);
    clock = observeTick(clock, record, healthOf(record, 5, 40_000), 40_000, tuning);
    expect(clock.idle).toBe(true);
  });

  it("comes back to the heartbeat as soon as a probe sees LSN progress", () => {
    const idle = { probedAtMs: 60_000, fingerprint: null, progressAtMs: 0, idle: true };
    const quiet = observeTick({ ...idle, fingerprint: observeTick(idle, record, healthOf(record, 5, 0), 0, tuning).fingerprint }, record, healthOf(record, 5, 120_000), 120_000, tuning);
    expect(quiet.idle).toBe(true);
    const moved = observeTick(quiet, record, healthOf(record, 6, 180_000), 180_000, tuning);
    expect(moved.idle).toBe(false);
    expect(nextProbeAtMs(moved, record, healthOf(record, 6, 180_000), null, tuning)).toBe(180_500);
  });

  it("never idles a dataflow with clock ticks, one not healthy, or one with a replica missing probes", () => {
    const ticking = makeRecord("df", spec({ partitions: 2, idleAdvanceMs: 1_000 }));
    const degraded = DataflowRecordSchema.parse(structuredClone(record));
    if (degraded.routes[0]) degraded.routes[0].status = "degraded";
    const primary = record.routes[0]?.primary ?? "";
    const cases: [DataflowRecord, (at: number) => HealthMap][] = [
      [ticking, (at) => healthOf(ticking, 5, at)],
      [degraded, (at) => healthOf(degraded, 5, at)],
      [record, (at) => healthOf(record, 5, at, [primary])],
    ];
    for (const [r, health] of cases) {
      let clock = freshClock(null);
      for (let at = 0; at <= 60_000; at += 500) clock = observeTick(clock, r, health(at), at, tuning);
      expect(clock.idle).toBe(false);
    }
  });

  it("probes a healthy active dataflow the data path watches every watchProbeMs; one with clock ticks, a partition not healthy or a replica that missed every heartbeat (issue 29)", () => {
    const watching: ScheduleTuning = { ...tuning, watchProbeMs: 10_000 };
    const health = healthOf(record, 5, 1_000);
    const clock = observeTick(freshClock(null), record, health, 1_000, watching);
    expect(nextProbeAtMs(clock, record, health, null, watching)).toBe(11_000);
    // A report of a failed or slow call brings the probe forward at once.
    expect(nextProbeAtMs(clock, record, health, 3_000, watching)).toBe(3_000);
    const ticking = makeRecord("df", spec({ partitions: 2, idleAdvanceMs: 1_000 }));
    const degraded = DataflowRecordSchema.parse(structuredClone(record));
    if (degraded.routes[0]) degraded.routes[0].status = "degraded";
    for (const r of [ticking, degraded]) expect(nextProbeAtMs(observeTick(freshClock(null), r, healthOf(r, 5, 1_000), 1_000, watching), r, healthOf(r, 5, 1_000), null, watching)).toBe(1_500);
    const lost = healthOf(record, 5, 1_000);
    const first = Object.values(lost)[0];
    if (first) first.last = null;
    expect(nextProbeAtMs(observeTick(freshClock(null), record, lost, 1_000, watching), record, lost, null, watching)).toBe(1_500);
    // Never sooner than the heartbeat, whatever the setting.
    expect(nextProbeAtMs(clock, record, health, null, { ...tuning, watchProbeMs: 100 })).toBe(1_500);
  });

  it("re-probes a replica that missed after one miss spacing, not a heartbeat", () => {
    const primary = record.routes[0]?.primary ?? "";
    const health = healthOf(record, 5, 1_000, [primary]);
    const clock = observeTick(freshClock(null), record, health, 1_000, tuning);
    expect(nextProbeAtMs(clock, record, health, null, tuning)).toBe(1_250);
  });

  it("probes at once on a router's report, but not sooner than a miss spacing after the last probe", () => {
    const health = healthOf(record, 5, 0);
    const idle = { probedAtMs: 0, fingerprint: "x", progressAtMs: -60_000, idle: true };
    expect(nextProbeAtMs(idle, record, health, null, tuning)).toBe(60_000);
    expect(nextProbeAtMs(idle, record, health, 30_000, tuning)).toBe(30_000);
    expect(nextProbeAtMs(idle, record, health, 100, tuning)).toBe(250);
    // A report from before the last probe was already answered by it.
    expect(nextProbeAtMs({ ...idle, probedAtMs: 40_000 }, record, health, 30_000, tuning)).toBe(100_000);
  });

  it("keeps a dataflow idle across a restart through its stored marker, and only flips it on a change", () => {
    const health = healthOf(record, 5, 0);
    const marker = { fingerprint: observeTick(freshClock(null), record, health, 0, tuning).fingerprint ?? "", quietSinceMs: -100_000 };
    const schedule = new MonitorSchedule(tuning, () => marker);
    expect(schedule.dueAtMs(record, health)).toBe(Number.NEGATIVE_INFINITY);
    expect(schedule.observe(record, health, 1_000)).toMatchObject({ idle: true, flipped: false });
    expect(schedule.dueAtMs(record, health)).toBe(61_000);
    expect(schedule.observe(record, healthOf(record, 6, 61_000), 61_000)).toMatchObject({ idle: false, flipped: true });
  });

  it("routes a report to the dataflow that holds the replica, and rate-limits the alarm it asks for", () => {
    const other = makeRecord("other", spec({ partitions: 1 }));
    const schedule = new MonitorSchedule(tuning, () => null);
    for (const r of [record, other]) schedule.observe(r, healthOf(r, 5, 1_000), 1_000);
    expect(schedule.report(record.routes[1]?.standby ?? "", 1_100)).toBe(1_250);
    expect(schedule.dueAtMs(record, healthOf(record, 5, 1_000))).toBe(1_250);
    expect(schedule.dueAtMs(other, healthOf(other, 5, 1_000))).toBe(1_500);
    expect(schedule.report(null, 2_000)).toBe(2_000);
    expect(schedule.dueAtMs(other, healthOf(other, 5, 1_000))).toBe(2_000);
  });

  it("counts what is due within a heartbeat of the alarm as due", () => {
    expect(isDue(10_400, 10_000, tuning)).toBe(true);
    expect(isDue(10_600, 10_000, tuning)).toBe(false);
  });
});

describe("durableHealth", () => {
  const record = makeRecord("df", spec({ partitions: 1 }));

  it("ignores heartbeat times and LSNs, and sees misses and role changes", () => {
    const base = durableHealth(healthOf(record, 5, 1_000));
    expect(durableHealth(healthOf(record, 9, 2_000))).toBe(base);
    expect(durableHealth(healthOf(record, 5, 1_000, [record.routes[0]?.primary ?? ""]))).not.toBe(base);
    const retired = healthOf(record, 5, 1_000);
    const entry = Object.values(retired)[0];
    if (entry?.last) entry.last.role = "retired";
    expect(durableHealth(retired)).not.toBe(base);
  });
});

/** The coordinator's alarm step over a memory cluster and a counting key-value map. */
function alarmHost(records: DataflowRecord[]) {
  const cluster = new MemoryCluster({ dedupWindow: 64, checkpointEvery: 4 });
  for (const r of records) cluster.setUp(r);
  const stored = new Map(records.map((r) => [r.id, JSON.stringify(r)]));
  const health = new Map<string, HealthMap>();
  const counts = { probes: 0, writes: 0 };
  cluster.beforeCall = (_replica, method) => void (method === "probe" && (counts.probes += 1));
  let nowMs = 0;
  const host: DueTickHost = {
    list: () => [...stored.values()].map((json) => DataflowRecordSchema.parse(JSON.parse(json))),
    health: (id) => health.get(id) ?? (health.set(id, {}), health.get(id) ?? {}),
    tickStore: (loaded) => {
      const before = new Map(loaded.map((r) => [r.id, JSON.stringify(r)]));
      const written = new Map<string, string>();
      return {
        released: () => new Map(),
        save: async (r, h) => {
          health.set(r.id, h);
          const json = JSON.stringify(r);
          if ((written.get(r.id) ?? before.get(r.id)) !== json) {
            stored.set(r.id, json);
            written.set(r.id, json);
            counts.writes += 1;
          }
        },
      };
    },
    setIdleMarker: () => void (counts.writes += 1),
    port: () => cluster,
    finishDeletion: async () => undefined,
    now: () => nowMs,
    log: FAIL_ON_MONITOR_ERROR,
  };
  const setNow = (ms: number) => void (nowMs = ms);
  /** Runs every alarm from `fromMs` while it is due by `untilMs`: the alarms run, and when the next is due. */
  const alarmsThrough = async (schedule: MonitorSchedule, monitorTuning: Parameters<typeof runDueTicks>[3], fromMs: number, untilMs: number) => {
    const alarms: number[] = [];
    let next = fromMs;
    while (next <= untilMs) {
      setNow(next);
      alarms.push(next);
      next = (await runDueTicks(host, schedule, next, monitorTuning)) ?? Number.POSITIVE_INFINITY;
    }
    return { alarms, next };
  };
  return { host, cluster, counts, setNow, alarmsThrough, stored };
}

describe("the coordinator's alarm step", () => {
  it("stops probing an idle dataflow every heartbeat and writes nothing while it stays idle", async () => {
    const record = makeRecord("df", spec({ partitions: 4 }));
    const { counts, alarmsThrough } = alarmHost([record]);
    const schedule = new MonitorSchedule(tuning, () => null);
    const monitorTuning = { ...tuning, failAfterMisses: 2, locationHints: [] };
    // 10 s of heartbeats without traffic: probed every time, then idle.
    const active = await alarmsThrough(schedule, monitorTuning, 0, 10_000);
    // Quiet since the first probe (at 0): next probe after as long again.
    expect(active.next).toBe(20_000);
    const probesWhileActive = counts.probes;
    expect(probesWhileActive).toBe(21 * 8);
    // The next idle hour: probes thinning out to one a minute, 8 calls each, no row written.
    const writesBefore = counts.writes;
    const { alarms } = await alarmsThrough(schedule, monitorTuning, active.next, 10_000 + 3_600_000);
    expect(alarms.slice(0, 4)).toEqual([20_000, 40_000, 80_000, 140_000]);
    // 20, 40 and 80 s, then every 60 s from 140 s up to 3,610 s: 3 + 58.
    expect(alarms.length).toBe(61);
    expect(counts.probes - probesWhileActive).toBe(alarms.length * 8);
    expect(counts.writes - writesBefore).toBe(0);
  });

  it("probes at once when a replica fails while idle, and fails it over within a miss spacing", async () => {
    const record = makeRecord("df", spec({ partitions: 1 }));
    const { host, cluster, setNow, alarmsThrough } = alarmHost([record]);
    const idleSchedule = new MonitorSchedule(tuning, () => null);
    const monitorTuning = { ...tuning, failAfterMisses: 2, locationHints: [] };
    await alarmsThrough(idleSchedule, monitorTuning, 0, 10_000);
    const primary = record.routes[0]?.primary ?? "";
    cluster.inject(primary, "crash");
    const reportAt = 20_000;
    expect(idleSchedule.report(primary, reportAt)).toBe(reportAt);
    for (let at = reportAt; at < reportAt + 1_000; ) {
      setNow(at);
      const next = (await runDueTicks(host, idleSchedule, at, monitorTuning)) ?? 0;
      if (host.list()[0]?.routes[0]?.primary !== primary) break;
      expect(next - at).toBeLessThanOrEqual(tuning.missSpacingMs);
      at = next;
    }
    expect(host.list()[0]?.routes[0]?.primary).toBe(record.routes[0]?.standby);
  });

  it("continues a recovery with work left at once, not a heartbeat later", async () => {
    const record = makeRecord("df", spec({ partitions: 1 }));
    const { host, cluster, counts, setNow } = alarmHost([record]);
    // A snapshot of many chunks: one tick's share of replica calls cannot copy it. The
    // fresh replica's side is faked: it holds the chunks accepted so far.
    const accepted: number[] = [];
    const big = { ...cluster, beginSeed: async (name: string, epoch: number) => {
      const begun = await cluster.beginSeed(name, epoch);
      return begun.status === "ok" ? { ...begun, chunks: 500 } : begun;
    }, readSeedChunk: async () => ({ status: "ok" as const, body: "", lsn: 0 }),
      seedProgress: async () => ({ status: "ok" as const, chunks: accepted.length, outputSeq: 0 }),
      acceptSeedChunk: async (_name: string, _id: string, index: number) => {
        accepted.push(index);
        return { status: "ok" as const };
      } };
    host.port = () => big;
    const schedule = new MonitorSchedule(tuning, () => null);
    const monitorTuning = { ...tuning, failAfterMisses: 1, locationHints: [] };
    setNow(0);
    await runDueTicks(host, schedule, 0, monitorTuning);
    cluster.inject(record.routes[0]?.standby ?? "", "crash");
    setNow(500);
    expect(await runDueTicks(host, schedule, 500, monitorTuning)).toBe(500);
    const copied = accepted.length;
    expect(copied).toBeGreaterThan(0);
    const probes = counts.probes;
    setNow(510);
    await runDueTicks(host, schedule, 510, monitorTuning);
    expect(counts.probes).toBeGreaterThan(probes);
    // The next tick goes on from the first chunk not yet held: every chunk once, in order.
    expect(accepted.length).toBeGreaterThan(copied);
    expect(accepted).toEqual(accepted.map((_, i) => i));
  });
});
