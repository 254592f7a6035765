/**
 * Removing a dataflow (issue 6): every replica it ever had is told to drop its state;
 * the record stays, marked `deleting`, until all of them confirmed, and a tombstone keeps
 * its highest epoch so a dataflow created again under the same id starts above it.
 */
import { replicasToProbe } from "../shared/monitor/plan-monitor-tick.ts";
import type { DataflowRecord } from "../shared/wire/routing.ts";
import { replicaStub, withDeadline } from "../platform/object-calls.ts";
import type { MonitorRecords } from "./monitor-records.ts";

/** Tells every replica of `record` to drop its state. @returns the replicas that did not confirm. */
async function destroyReplicas(env: Env, record: DataflowRecord, timeoutMs: number): Promise<string[]> {
  const names = replicasToProbe(record);
  const outcomes = await Promise.all(
    names.map(async (name) => {
      try {
        await withDeadline(async () => replicaStub(env, name).destroy(), timeoutMs, `replica ${name} (destroy)`);
        return null;
      } catch {
        return name;
      }
    }),
  );
  return outcomes.filter((name): name is string => name !== null);
}

/** Destroys a deleting record's replicas; once all confirmed, removes it and leaves a tombstone. @returns the replicas still to confirm. */
export async function finishDeletion(env: Env, records: MonitorRecords, record: DataflowRecord, timeoutMs: number): Promise<string[]> {
  const pending = await destroyReplicas(env, record, timeoutMs);
  if (pending.length === 0) records.remove(record.id, highestEpoch(record));
  return pending;
}

/** The epoch a new dataflow of this id must start at, after a deleted one reached `maxEpoch`. */
function highestEpoch(record: DataflowRecord): number {
  return Math.max(...record.routes.map((route) => route.epoch));
}
