/**
 * How Worker routes reach the Durable Objects: the coordinator stub, a `ReplicaPort`
 * over replica stubs, and routing lookups through the per-isolate cache.
 */
import { COORDINATOR_NAME } from "../shared/names.ts";
import type { ReplicaPort } from "../shared/router/write-partition.ts";
import type { RoutingCache } from "../shared/router/routing-cache.ts";
import type { DataflowRecord } from "../shared/wire/routing.ts";

/** The coordinator's stub. */
export function coordinator(env: Env): DurableObjectStub<import("../durable-objects/coordinator.ts").Coordinator> {
  return env.COORDINATOR.getByName(COORDINATOR_NAME);
}

/** Replica RPCs by replica name. */
export function replicaPort(env: Env): ReplicaPort {
  const stub = (name: string) => env.PARTITION_REPLICA.getByName(name);
  return {
    applyBatch: (name, msg) => stub(name).applyBatch(msg),
    replicate: (name, msg) => stub(name).replicate(msg),
    ackStandby: (name, msg) => stub(name).ackStandby(msg),
    readLog: (name, epoch, fromLsn, toLsn) => stub(name).readLog(epoch, fromLsn, toLsn),
  };
}

/** Ready dataflows reading `stream`, from the cache unless `fresh` or expired. */
export async function dataflowsForStream(env: Env, cache: RoutingCache, stream: string, fresh: boolean): Promise<DataflowRecord[]> {
  const now = Date.now();
  const cached = fresh ? undefined : cache.get(stream, now);
  if (cached) return cached;
  const all = await coordinator(env).listDataflows();
  const records = all.filter((record) => record.ready && record.spec.stream === stream);
  cache.set(stream, records, now);
  return records;
}
