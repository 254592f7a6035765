/**
 * What each replica of a partition should be told, derived from its route alone, so
 * the monitor can re-send it until every replica agrees (reconciliation makes every
 * takeover step idempotent: alarms are delivered at least once).
 */
import type { InitReplica, ReplicaStatus } from "../wire/replica-rpc.ts";
import type { DataflowRecord, PartitionRoute } from "../wire/routing.ts";

/** The configuration each replica named by the route should hold (none while unavailable). */
export function desiredConfigs(record: DataflowRecord, route: PartitionRoute): InitReplica[] {
  const base = { dataflowId: record.id, partition: route.partition, spec: record.spec, epoch: route.epoch, version: route.version, readers: record.readers };
  const configs: InitReplica[] = route.retired.map((name) => ({ ...base, name, role: "retired", hasStandby: false, standby: null }));
  if (route.status === "unavailable") return configs;
  configs.push({
    ...base,
    name: route.primary,
    role: "primary",
    hasStandby: route.standby !== null,
    standby: route.standby,
  });
  if (route.standby !== null) configs.push({ ...base, name: route.standby, role: "standby", hasStandby: false, standby: null });
  return configs;
}

/** Whether a replica's reported status already matches `desired`. */
export function isConfigured(status: ReplicaStatus | null, desired: InitReplica): boolean {
  if (status === null) return desired.role === "retired";
  if (status.epoch > desired.epoch) return true;
  return (
    status.epoch === desired.epoch &&
    status.role === desired.role &&
    status.hasStandby === desired.hasStandby &&
    status.standby === (desired.standby ?? null) &&
    status.readers.join(",") === (desired.readers ?? []).join(",")
  );
}
