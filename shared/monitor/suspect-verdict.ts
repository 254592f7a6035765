/**
 * What the monitor can tell a router that reported a slow call to a replica (issue 12,
 * deliverable 5): whether the replica was replaced since (the router stops waiting and
 * the client's retry goes to the new routing), or whether it answered a probe sent after
 * the report (merely busy: the router keeps waiting for its call).
 */
import type { DataflowRecord, HealthMap, SuspectVerdict } from "../wire/routing.ts";

/**
 * The verdict on `replica` reported at `reportedAtMs`, or null while there is none yet.
 * @param healthOf the monitor's latest health for a dataflow.
 */
export function suspectVerdict(
  records: readonly DataflowRecord[],
  healthOf: (id: string) => HealthMap,
  replica: string,
  reportedAtMs: number,
): Exclude<SuspectVerdict, "undecided"> | null {
  const record = records.find((r) => !r.deleting && r.routes.some((route) => [route.primary, route.standby, route.recovery?.replica].includes(replica)));
  if (!record) return "replaced";
  const seen = healthOf(record.id)[replica];
  return seen && seen.misses === 0 && seen.lastOkAtMs !== null && seen.lastOkAtMs >= reportedAtMs ? "answering" : null;
}
