/**
 * The monitor's decisions for one dataflow on one tick (DESIGN.md §4), as a pure
 * function of the routing, the replicas' health and this tick's probes:
 * failed primary → bump epoch, promote the standby; failed standby → degraded;
 * both down → unavailable until one returns with its state; degraded → start seeding
 * a fresh standby. The caller persists the result, then reconciles replicas to it.
 */
import { replicaName } from "../names.ts";
import type { ProbeResult } from "./monitor-port.ts";
import type { ReplicaStatus } from "../wire/replica-rpc.ts";
import type { DataflowRecord, HealthMap, MonitorEvent, PartitionRoute } from "../wire/routing.ts";
import { MAX_EVENTS } from "../wire/routing.ts";

/** Monitor settings from {@link FluxConfig}. */
export interface MonitorTuning {
  failAfterMisses: number;
  locationHints: readonly string[];
  /**
   * Misses count only when at least this far apart, ms, so probes triggered back to back
   * by routers' reports cannot fail a replica that merely stalled for a moment.
   */
  missSpacingMs: number;
}

/** Every replica the monitor should probe for a record (also every one a `DELETE` must clear). */
export function replicasToProbe(record: DataflowRecord): string[] {
  const names = new Set<string>();
  for (const route of record.routes) {
    names.add(route.primary);
    if (route.standby) names.add(route.standby);
    if (route.recovery) names.add(route.recovery.replica);
    for (const name of route.retired) names.add(name);
  }
  return [...names];
}

/**
 * Updates health from probes and applies the decisions to `record` in place.
 * @returns whether anything in the record changed (so it must be persisted).
 */
export function planMonitorTick(
  record: DataflowRecord,
  health: HealthMap,
  probes: ReadonlyMap<string, ProbeResult>,
  nowMs: number,
  tuning: MonitorTuning,
): boolean {
  updateHealth(record, health, probes, nowMs, tuning.missSpacingMs);
  const before = JSON.stringify(record.routes);
  const event = (route: PartitionRoute, kind: MonitorEvent["kind"], detail: string) => {
    record.events.push({ atMs: nowMs, partition: route.partition, kind, detail });
    if (record.events.length > MAX_EVENTS) record.events.splice(0, record.events.length - MAX_EVENTS);
  };
  const failed = (name: string) => (health[name]?.misses ?? 0) >= tuning.failAfterMisses;

  for (const route of record.routes) {
    if (route.status === "unavailable") {
      resumeIfPossible(record, route, health, event);
      continue;
    }
    const primaryFailed = failed(route.primary);
    const standbyFailed = route.standby !== null && failed(route.standby);
    // Only a healthy partition's standby holds everything acknowledged; an attached
    // standby that is still catching up must never be promoted.
    if (primaryFailed && route.status === "healthy" && route.standby !== null && !standbyFailed) {
      const old = route.primary;
      retire(route, old);
      route.primary = route.standby;
      route.standby = null;
      bump(route, "degraded");
      event(route, "takeover", `primary ${old} failed; ${route.primary} is primary at epoch ${route.epoch}`);
    } else if (primaryFailed) {
      cancelRecovery(route);
      bump(route, "unavailable");
      event(route, "unavailable", `primary ${route.primary} failed with no standby able to take over; waiting for a replica to return`);
    } else if (standbyFailed && route.standby !== null) {
      const old = route.standby;
      cancelRecovery(route);
      retire(route, old);
      route.standby = null;
      bump(route, "degraded");
      event(route, "degraded", `standby ${old} failed; ${route.primary} serves alone at epoch ${route.epoch}`);
    } else if (route.recovery && failed(route.recovery.replica)) {
      const lost = route.recovery.replica;
      cancelRecovery(route);
      route.status = "degraded";
      route.version += 1;
      event(route, "recovery-restarted", `fresh replica ${lost} failed while being seeded`);
    }
    if (route.status === "degraded" && route.recovery === null) {
      const replica = replicaName(record.id, route.partition, route.nextGeneration);
      route.nextGeneration += 1;
      route.hints[replica] = pickHint(tuning.locationHints, route.hints[route.primary] ?? null, route.nextGeneration);
      route.recovery = { replica, startedAtMs: nowMs, phase: "seeding", attachLsn: null, snapshot: null };
      route.status = "recovering";
      route.version += 1;
      event(route, "recovery-started", `seeding fresh standby ${replica} from ${route.primary}`);
    }
  }
  return JSON.stringify(record.routes) !== before;
}

/** Records applied per second since the replica's previous answered probe; null without one, or when its count restarted. */
function rateSince(entry: HealthMap[string], status: ReplicaStatus | null, nowMs: number): number | null {
  const before = entry.last;
  if (!status || !before || entry.lastOkAtMs === null || nowMs <= entry.lastOkAtMs || status.recordsApplied < before.recordsApplied) return null;
  return Math.round(((status.recordsApplied - before.recordsApplied) * 1000) / (nowMs - entry.lastOkAtMs));
}

function updateHealth(record: DataflowRecord, health: HealthMap, probes: ReadonlyMap<string, ProbeResult>, nowMs: number, missSpacingMs: number): void {
  for (const [name, probe] of probes) {
    const entry = (health[name] ??= { misses: 0, lastOkAtMs: null, last: null, lastMissAtMs: null, eventsPerSecond: null });
    // A replica answering without state, or with another partition's, lost its storage: a miss.
    const sound = probe.ok && probe.status !== null && probe.status.dataflowId === record.id;
    // Only a fresh replica not yet seeded may answer empty; once installed, losing its state is a failure (issue 10).
    const expectedEmpty = probe.ok && probe.status === null && record.routes.some((r) => r.recovery?.replica === name && r.recovery.phase === "seeding");
    if (sound || expectedEmpty) {
      entry.eventsPerSecond = probe.ok ? rateSince(entry, probe.status, nowMs) : null;
      entry.misses = 0;
      entry.lastOkAtMs = nowMs;
      entry.lastMissAtMs = null;
      entry.last = probe.ok ? probe.status : null;
    } else if (entry.lastMissAtMs === null || nowMs - entry.lastMissAtMs >= missSpacingMs) {
      entry.misses += 1;
      entry.lastMissAtMs = nowMs;
    }
  }
  const watched = new Set(replicasToProbe(record));
  for (const name of Object.keys(health)) if (!watched.has(name)) delete health[name];
}

/** An unavailable partition resumes with whichever old replica answers with state, highest LSN first. */
function resumeIfPossible(
  record: DataflowRecord,
  route: PartitionRoute,
  health: HealthMap,
  event: (route: PartitionRoute, kind: MonitorEvent["kind"], detail: string) => void,
): void {
  const candidates = [route.primary, ...(route.standby ? [route.standby] : [])]
    .map((name) => ({ name, h: health[name] }))
    .filter((c) => c.h?.misses === 0 && c.h.last !== null && c.h.last.dataflowId === record.id && c.h.last.role !== "retired")
    .sort((a, b) => (b.h?.last?.lsn ?? 0) - (a.h?.last?.lsn ?? 0));
  const chosen = candidates[0];
  if (!chosen) return;
  for (const name of [route.primary, route.standby]) if (name && name !== chosen.name) retire(route, name);
  route.primary = chosen.name;
  route.standby = null;
  // Without replication there is no standby to seed: the partition is whole again.
  bump(route, record.spec.replication === 1 ? "healthy" : "degraded");
  event(route, "resumed", `${chosen.name} returned with LSN ${chosen.h?.last?.lsn ?? 0}; primary at epoch ${route.epoch}`);
}

function bump(route: PartitionRoute, status: PartitionRoute["status"]): void {
  route.epoch += 1;
  route.version += 1;
  route.status = status;
}

/** Remembers a replaced replica so it is told to retire whenever it answers again (at most 16 kept). */
function retire(route: PartitionRoute, name: string): void {
  if (!route.retired.includes(name)) route.retired.push(name);
  if (route.retired.length > 16) route.retired.splice(0, route.retired.length - 16);
}

/** Abandons a recovery; its replica is retired, and leaves the standby slot if it was attached. */
function cancelRecovery(route: PartitionRoute): void {
  if (route.recovery) {
    retire(route, route.recovery.replica);
    if (route.standby === route.recovery.replica) route.standby = null;
  }
  route.recovery = null;
}

/** A location hint different from the survivor's, rotating through the list; null without hints. */
function pickHint(hints: readonly string[], avoid: string | null, salt: number): string | null {
  const usable = hints.filter((h) => h !== avoid);
  return usable.length === 0 ? null : (usable[salt % usable.length] ?? null);
}
