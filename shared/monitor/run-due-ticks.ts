/**
 * A dataflow monitor's alarm, as one step over injected storage and ports: finish pending
 * deletions, tick the dataflows that are due (`probe-schedule.ts`), note which went idle
 * or active, and say when the alarm should fire next. Writes only what changed: the
 * store compares with what it holds, and an idle marker is written only when it flips.
 */
import type { DataflowRecord, HealthMap } from "../wire/routing.ts";
import type { MonitorLog } from "./monitor-errors.ts";
import type { MonitorPort } from "./monitor-port.ts";
import type { MonitorTuning } from "./plan-monitor-tick.ts";
import { isDue, type IdleMarker, type MonitorSchedule, type ScheduleTuning } from "./probe-schedule.ts";
import { runMonitorTick, type MonitorStore } from "./run-monitor-tick.ts";

/** What the alarm step reads and writes; its monitor object backs it with its storage and stubs. */
export interface DueTickHost {
  list(): DataflowRecord[];
  health(id: string): HealthMap;
  /** A store for one tick over `records` as loaded. */
  tickStore(records: readonly DataflowRecord[]): MonitorStore;
  setIdleMarker(id: string, marker: IdleMarker | null): void;
  port(records: readonly DataflowRecord[]): MonitorPort;
  /** Tries to finish deleting `record` (removing it once every replica confirmed). */
  finishDeletion(record: DataflowRecord): Promise<unknown>;
  /** The current time, epoch ms. */
  now(): number;
  /** Where the monitor reports errors that are not failed replica calls (`monitor-errors.ts`). */
  log: MonitorLog;
}

/**
 * Runs one alarm that stands for `alarmAtMs` (an alarm may fire early: it is treated as on
 * time); ticks only when some dataflow is due by then, and then also those due within a heartbeat.
 * @returns when the alarm should fire next, epoch ms; null when there is nothing left to watch.
 */
export async function runDueTicks(host: DueTickHost, schedule: MonitorSchedule, alarmAtMs: number, tuning: MonitorTuning & ScheduleTuning): Promise<number | null> {
  const startedAtMs = host.now();
  const all = host.list();
  for (const record of all.filter((r) => r.deleting)) await host.finishDeletion(record);
  const live = all.filter((r) => !r.deleting);
  schedule.retain(new Set(live.map((r) => r.id)));
  if (all.length === 0) return null;
  const standsFor = Math.max(startedAtMs, alarmAtMs);
  const withHealth = live.map((record) => ({ record, health: host.health(record.id) }));
  // Nothing due yet (a report within a miss spacing of the last tick): only re-arm.
  const anyDue = withHealth.some(({ record, health }) => schedule.dueAtMs(record, health) <= standsFor);
  const due = anyDue ? withHealth.filter(({ record, health }) => isDue(schedule.dueAtMs(record, health), standsFor, tuning)) : [];
  let pending = false;
  if (due.length > 0) {
    const records = due.map(({ record }) => record);
    pending = (await runMonitorTick(host.port(records), host.tickStore(records), due, startedAtMs, tuning, host.log, () => host.now())).recoveryPending;
  }
  for (const { record, health } of due) {
    const seen = schedule.observe(record, health, startedAtMs);
    if (seen.flipped) host.setIdleMarker(record.id, seen.idle ? seen.marker : null);
  }
  const nowMs = host.now();
  // A recovery with work left continues at once; probes still run between its slices.
  if (pending) {
    for (const { record } of due) if (record.routes.some((r) => r.status === "recovering")) schedule.hurry(record.id);
    return nowMs;
  }
  const dueTimes = live.map((record) => schedule.dueAtMs(record, host.health(record.id)));
  // Deletions still waiting for a replica are retried every heartbeat.
  if (live.length < all.length) dueTimes.push(startedAtMs + tuning.heartbeatMs);
  return Math.max(nowMs, Math.min(...dueTimes));
}
