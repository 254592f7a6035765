/**
 * Probes of retired replicas (replaced ones, told to retire whenever they answer again).
 * They never hold up a tick's decisions: the tick awaits them only after fail-over,
 * reconciliation and recoveries. One that keeps missing (down for good, or hung) is asked
 * ever more rarely, so it cannot stretch every tick by a probe timeout.
 */
import type { DataflowRecord, HealthMap } from "../wire/routing.ts";
import type { ProbeResult } from "./monitor-port.ts";

/** The longest wait between probes of a retired replica that keeps missing: base × 2^this. */
const MAX_BACKOFF_DOUBLINGS = 8;

/** Every retired replica of the record (each listed once). */
export function retiredReplicas(record: DataflowRecord): Set<string> {
  return new Set(record.routes.flatMap((route) => route.retired));
}

/**
 * Of the `retired` replicas, those to probe now: those that have not missed, and those
 * whose last miss is at least `baseMs × 2^(misses - 1)` ago (at most `baseMs × 2^8`).
 */
export function retiredDue(retired: ReadonlySet<string>, health: HealthMap, nowMs: number, baseMs: number): string[] {
  return [...retired].filter((name) => {
    const entry = health[name];
    if (!entry || entry.misses === 0 || entry.lastMissAtMs === null) return true;
    const waitMs = baseMs * 2 ** Math.min(entry.misses - 1, MAX_BACKOFF_DOUBLINGS);
    return nowMs - entry.lastMissAtMs >= waitMs;
  });
}

/**
 * Records retired replicas' probes in `health`: an answer clears the misses, anything else
 * counts one (the caller saves: only what changed is written).
 */
export function noteRetiredProbes(health: HealthMap, probes: ReadonlyMap<string, ProbeResult>, nowMs: number): void {
  for (const [name, probe] of probes) {
    const entry = (health[name] ??= { misses: 0, lastOkAtMs: null, last: null, lastMissAtMs: null, eventsPerSecond: null });
    if (probe.ok) {
      entry.misses = 0;
      entry.lastMissAtMs = null;
      entry.lastOkAtMs = nowMs;
      entry.last = probe.status;
    } else {
      entry.misses += 1;
      entry.lastMissAtMs = nowMs;
    }
  }
}
