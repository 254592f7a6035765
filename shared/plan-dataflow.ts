/**
 * Pure decisions about a dataflow's record (made by its monitor): the initial routing table
 * of a new dataflow, and whether a re-submitted spec matches the stored one.
 */
import { newKeyGroupTable } from "./keygroups/key-groups.ts";
import { replicaName } from "./names.ts";
import type { DataflowSpec } from "./wire/dataflow-spec.ts";
import type { DataflowRecord } from "./wire/routing.ts";

/**
 * A new dataflow's record: every partition at `firstEpoch` (1, or above every epoch an
 * earlier dataflow of the same id used, so its stale routers are fenced), replica
 * generation 0 primary and 1 standby (R=2). With location hints, a partition's two
 * replicas get different ones. Its keys hash to {@link newKeyGroupTable}'s groups.
 */
export function planDataflow(id: string, spec: DataflowSpec, nowMs: number, locationHints: readonly string[] = [], firstEpoch = 1): DataflowRecord {
  const hint = (i: number) => (locationHints.length === 0 ? null : (locationHints[i % locationHints.length] ?? null));
  const routes = Array.from({ length: spec.partitions }, (_, partition) => {
    const primary = replicaName(id, partition, 0);
    const standby = spec.replication === 2 ? replicaName(id, partition, 1) : null;
    const hints: Record<string, string | null> = { [primary]: hint(partition) };
    if (standby) hints[standby] = hint(partition + 1);
    return { partition, epoch: firstEpoch, primary, standby, status: "healthy" as const, version: 1, nextGeneration: 2, retired: [], hints, recovery: null };
  });
  return { v: 1, id, spec, createdAtMs: nowMs, ready: false, deleting: false, routes, keyGroups: newKeyGroupTable(spec.partitions), moves: [], nextMove: 1, readers: [], events: [] };
}

/** Top-level spec fields whose values differ (after defaults), in a stable order. */
export function changedFields(a: DataflowSpec, b: DataflowSpec): string[] {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  const field = (spec: DataflowSpec, key: string) => canonicalJson((spec as Record<string, unknown>)[key]);
  return keys.filter((key) => field(a, key) !== field(b, key));
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
