/**
 * Pure decisions of the coordinator about dataflow records: the initial routing table
 * of a new dataflow, and whether a re-submitted spec matches the stored one.
 */
import { replicaName } from "./names.ts";
import type { DataflowSpec } from "./wire/dataflow-spec.ts";
import type { InitReplica } from "./wire/replica-rpc.ts";
import type { DataflowRecord } from "./wire/routing.ts";

/** A new dataflow's record: every partition at epoch 1, replica generation 0 primary and 1 standby (R=2). */
export function planDataflow(id: string, spec: DataflowSpec, nowMs: number): DataflowRecord {
  const routes = Array.from({ length: spec.partitions }, (_, partition) => ({
    partition,
    epoch: 1,
    primary: replicaName(id, partition, 0),
    standby: spec.replication === 2 ? replicaName(id, partition, 1) : null,
    status: "healthy" as const,
    version: 1,
  }));
  return { v: 1, id, spec, createdAtMs: nowMs, ready: false, routes };
}

/** The init messages that configure every replica of a record's current routing. */
export function replicaInits(record: DataflowRecord): InitReplica[] {
  return record.routes.flatMap((route) => {
    const base = { dataflowId: record.id, partition: route.partition, spec: record.spec, epoch: route.epoch };
    const inits: InitReplica[] = [{ ...base, name: route.primary, role: "primary", hasStandby: route.standby !== null }];
    if (route.standby !== null) inits.push({ ...base, name: route.standby, role: "standby", hasStandby: false });
    return inits;
  });
}

/** Whether two specs are the same after defaults (key order does not matter). */
export function isSameSpec(a: DataflowSpec, b: DataflowSpec): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
