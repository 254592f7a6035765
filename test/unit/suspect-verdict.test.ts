/**
 * Busy or hung (issue 12, deliverable 5): the monitor's verdict on a replica a router
 * reported as slow, the router abandoning a call once the replica was replaced, and the
 * alarm step telling a replica that stalls briefly from one that stopped answering.
 */
import { describe, expect, it } from "vitest";
import { reportingSlowCalls } from "../../functions/slow-call-report.ts";
import { DeadlineTimer } from "../../platform/deadline-timer.ts";
import { SuspectReports } from "../../functions/suspect-reports.ts";
import { MonitorSchedule, type ScheduleTuning } from "../../shared/monitor/probe-schedule.ts";
import { runDueTicks, type DueTickHost } from "../../shared/monitor/run-due-ticks.ts";
import { suspectVerdict } from "../../shared/monitor/suspect-verdict.ts";
import type { WriteReply } from "../../shared/wire/replica-rpc.ts";
import type { ReplicaPort } from "../../shared/router/write-partition.ts";
import { DataflowRecordSchema, type DataflowRecord, type HealthMap, type SuspectVerdict } from "../../shared/wire/routing.ts";
import { record as makeRecord, spec } from "../helpers/fixtures.ts";
import { FAIL_ON_MONITOR_ERROR, MemoryCluster } from "../helpers/memory-cluster.ts";

const PROBE_TIMEOUT_MS = 250;
const tuning: ScheduleTuning & { failAfterMisses: number; locationHints: string[] } = {
  heartbeatMs: 500, watchProbeMs: 500, idleProbeMs: 60_000, idleAfterMs: 10_000, missSpacingMs: 250, failAfterMisses: 2, locationHints: [],
};

describe("suspectVerdict", () => {
  const record = makeRecord("df", spec({ partitions: 1 }));
  const primary = record.routes[0]?.primary ?? "";
  const health = (misses: number, lastOkAtMs: number | null): HealthMap => ({ [primary]: { misses, lastOkAtMs, lastMissAtMs: null, last: null, eventsPerSecond: null } });

  it("is replaced once no route names the replica, answering once a probe after the report was answered", () => {
    expect(suspectVerdict([record], () => health(0, 900), "df/p0/g7", 1_000)).toBe("replaced");
    expect(suspectVerdict([record], () => health(0, 900), primary, 1_000)).toBeNull();
    expect(suspectVerdict([record], () => health(1, 1_200), primary, 1_000)).toBeNull();
    expect(suspectVerdict([record], () => health(0, 1_000), primary, 1_000)).toBe("answering");
    expect(suspectVerdict([{ ...record, deleting: true }], () => health(0, 1_000), primary, 1_000)).toBe("replaced");
  });
});

describe("reportingSlowCalls", () => {
  const pending = <T>() => new Promise<T>(() => {});
  const hungPort: ReplicaPort = { write: pending };
  const batch = { epoch: 1, batches: [{ producer: "p", seq: 1, records: "[]" }] };
  const applied = (lsn: number): WriteReply => ({ status: "ok", results: [{ status: "applied", lsn, replicated: true, late: 0 }] });

  it("abandons a slow call when the monitor answers that the replica was replaced", async () => {
    const asked: string[] = [];
    const port = reportingSlowCalls(hungPort, 5, async (name) => (asked.push(name), "replaced"), new DeadlineTimer());
    await expect(port.write("df/p0/g0", batch)).rejects.toThrow(/df\/p0\/g0 was failed over/);
    expect(asked).toEqual(["df/p0/g0"]);
  });

  it("keeps waiting on a replica the monitor found answering, and asks once per replica", async () => {
    let answer: (v: WriteReply) => void = () => {};
    // The first call (epoch 1) answers when the test says so; the second never does.
    const slow: ReplicaPort = { write: (_name, msg) => (msg.epoch === 1 ? new Promise((resolve) => (answer = resolve)) : pending()) };
    const asked: string[] = [];
    const port = reportingSlowCalls(slow, 5, async (name): Promise<SuspectVerdict> => (asked.push(name), "answering"), new DeadlineTimer());
    const call = port.write("df/p0/g0", batch);
    const second = port.write("df/p0/g0", { ...batch, epoch: 2 }).catch(() => "ignored");
    await new Promise((r) => setTimeout(r, 30));
    answer(applied(3));
    await expect(call).resolves.toEqual(applied(3));
    expect(asked).toEqual(["df/p0/g0"]);
    void second;
  });

  it("does not report a call that answers within the threshold", async () => {
    const quick: ReplicaPort = { write: async () => applied(1) };
    const asked: string[] = [];
    const port = reportingSlowCalls(quick, 20, async (name): Promise<SuspectVerdict> => (asked.push(name), "replaced"), new DeadlineTimer());
    await expect(port.write("df/p0/g0", batch)).resolves.toMatchObject({ status: "ok" });
    await new Promise((r) => setTimeout(r, 40));
    expect(asked).toEqual([]);
  });
});

describe("SuspectReports", () => {
  it("lets concurrent requests share one report per replica, and asks again once it was answered", async () => {
    const reports = new SuspectReports();
    let asked = 0;
    let answer: (v: SuspectVerdict) => void = () => {};
    const ask = () => ((asked += 1), new Promise<SuspectVerdict>((resolve) => (answer = resolve)));
    const first = reports.verdict("r", ask);
    const second = reports.verdict("r", ask);
    expect(asked).toBe(1);
    answer("answering");
    expect(await Promise.all([first, second])).toEqual(["answering", "answering"]);
    const third = reports.verdict("r", ask);
    expect(asked).toBe(2);
    answer("replaced");
    expect(await third).toBe("replaced");
  });
});

/**
 * A monitor over a memory cluster where `primary` cannot answer a probe before
 * `busyUntilMs` (a probe sent at t misses when the replica is still busy at t + timeout).
 */
async function stallPrimary(stallMs: number): Promise<{ failedOver: boolean }> {
  const record: DataflowRecord = makeRecord("df", spec({ partitions: 1 }));
  const cluster = new MemoryCluster({ dedupWindow: 64, checkpointEvery: 4 });
  cluster.setUp(record);
  const primary = record.routes[0]?.primary ?? "";
  let stored = JSON.stringify(record);
  const health: HealthMap = {};
  let nowMs = 0;
  const busyUntilMs = 1_000 + stallMs;
  cluster.beforeCall = (replica, method) => {
    if (replica === primary && method === "probe" && nowMs + PROBE_TIMEOUT_MS < busyUntilMs && nowMs >= 1_000) throw new Error("probe timed out");
  };
  const host: DueTickHost = {
    list: () => [DataflowRecordSchema.parse(JSON.parse(stored))],
    health: () => health,
    tickStore: () => ({ save: async (r) => void (stored = JSON.stringify(r)), released: () => new Map() }),
    setIdleMarker: () => {},
    port: () => cluster,
    finishDeletion: async () => undefined,
    now: () => nowMs,
    log: FAIL_ON_MONITOR_ERROR,
  };
  const schedule = new MonitorSchedule(tuning, () => null);
  // The stall begins at 1 s; a router reports it at once; each tick lasts as long as its slowest probe.
  for (let at = 0; at < 1_000; at = (await runDueTicks(host, schedule, at, tuning)) ?? 0) nowMs = at;
  nowMs = 1_000;
  let next = schedule.report(primary, nowMs);
  while (nowMs < 3_000) {
    nowMs = Math.max(nowMs, next);
    const missed = nowMs + PROBE_TIMEOUT_MS < busyUntilMs;
    next = (await runDueTicks(host, schedule, nowMs, tuning)) ?? 0;
    if (missed) nowMs += PROBE_TIMEOUT_MS;
  }
  return { failedOver: host.list()[0]?.routes[0]?.primary !== primary };
}

describe("busy or hung", () => {
  it("does not fail over a replica that stalls for less than a miss spacing plus a probe timeout", async () => {
    expect(await stallPrimary(450)).toEqual({ failedOver: false });
  });

  it("fails over one that stops answering for longer", async () => {
    expect(await stallPrimary(2_000)).toEqual({ failedOver: true });
  });
});
