/**
 * Broken variants of the monitor's decisions, injected by rewriting the record the real
 * monitor is about to save (see `variant-hooks.ts` for the replica-side hooks).
 */
import type { ReplicaStatus } from "../../shared/wire/replica-rpc.ts";
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

/**
 * resume-from-wrong-replica: the monitor keeps watching every replica a partition ever had
 * and resumes an unavailable partition from the one that answers with the lowest LSN,
 * a replica replaced earlier (and so missing later acknowledged writes) included.
 * `status` is what probing that replica would answer (null: down or empty).
 */
export function resumeFromLowest(): (record: DataflowRecord, before: DataflowRecord, health: HealthMap, status: (name: string) => ReplicaStatus | null) => void {
  const known = new Map<number, Set<string>>();
  return (record, before, _health, status) => {
    for (const route of before.routes) {
      const names = known.get(route.partition) ?? new Set<string>();
      for (const name of [route.primary, route.standby, ...route.retired]) if (name) names.add(name);
      known.set(route.partition, names);
    }
    for (const route of record.routes) {
      const old = before.routes[route.partition];
      if (!old || old.status !== "unavailable" || route.status === "unavailable") continue;
      const answering = [...(known.get(route.partition) ?? [])]
        .map((name) => ({ name, lsn: status(name)?.lsn }))
        .filter((c): c is { name: string; lsn: number } => c.lsn !== undefined)
        .sort((a, b) => a.lsn - b.lsn);
      const lowest = answering[0]?.name;
      if (!lowest || lowest === route.primary) continue;
      route.retired = [...route.retired.filter((name) => name !== lowest), route.primary];
      route.primary = lowest;
    }
  };
}
