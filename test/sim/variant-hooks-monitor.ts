/**
 * Broken variants of the monitor's decisions, injected by rewriting the record the real
 * monitor is about to save (see `variant-hooks.ts` for the replica-side hooks).
 */
import type { DataflowRecord, HealthMap } from "../../shared/wire/routing.ts";

/** promotion-without-fencing: a takeover keeps the old epoch. */
export function keepEpochOnTakeover(record: DataflowRecord, before: DataflowRecord): void {
  for (const route of record.routes) {
    const old = before.routes[route.partition];
    if (old && route.primary !== old.primary && route.epoch > old.epoch) route.epoch = old.epoch;
  }
}

/** both-down-available: a partition with no replica able to serve is reported degraded, not unavailable. */
export function hideUnavailable(record: DataflowRecord): void {
  for (const route of record.routes) if (route.status === "unavailable") route.status = "degraded";
}

/** resume-from-wrong-replica: an unavailable partition resumes from the returning replica with the lowest LSN. */
export function resumeFromLowest(record: DataflowRecord, before: DataflowRecord, health: HealthMap): void {
  for (const route of record.routes) {
    const old = before.routes[route.partition];
    if (!old || old.status !== "unavailable" || route.status === "unavailable") continue;
    const answering = [old.primary, ...(old.standby ? [old.standby] : [])]
      .map((name) => ({ name, last: health[name]?.misses === 0 ? health[name]?.last : null }))
      .filter((c) => c.last !== null && c.last !== undefined && c.last.role !== "retired")
      .sort((a, b) => (a.last?.lsn ?? 0) - (b.last?.lsn ?? 0));
    const lowest = answering[0]?.name;
    if (!lowest || lowest === route.primary) continue;
    route.retired = [...route.retired.filter((name) => name !== lowest), route.primary];
    route.primary = lowest;
  }
}
