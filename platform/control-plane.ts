/**
 * Lookups in the control plane that scales out (issue 29), for Workers and objects alike: a
 * dataflow's routing from its own monitor, a stream's from its directory and its members'
 * monitors. Each call has a deadline and rejects like a failed call. A monitor or directory
 * that never held anything may belong to a deployment upgraded a moment ago: the registry
 * is asked once per isolate to move the old layout over (`registry-migration.ts`), then
 * the lookup is repeated.
 */
import type { StreamRouting } from "../shared/router/routing-cache.ts";
import type { DataflowRecord } from "../shared/wire/routing.ts";
import { coordinatorStub, directoryStub, monitorStub, withDeadline } from "./object-calls.ts";

/** Set once this isolate saw the registry finish a migration (nothing of the old layout is left). */
let migrated = false;

async function migrateOnce(env: Env, timeoutMs: number): Promise<boolean> {
  if (migrated) return false;
  // Moving many dataflows takes a while: a longer deadline than a lookup's.
  await withDeadline(() => coordinatorStub(env).migrate(), 10 * timeoutMs, "the registry (migrate)");
  migrated = true;
  return true;
}

/** Dataflow `id`'s record from its monitor; null when there is none. */
export async function lookupDataflow(env: Env, id: string, timeoutMs: number): Promise<DataflowRecord | null> {
  const ask = () => withDeadline(() => monitorStub(env, id).lookup(), timeoutMs, `the monitor of dataflow '${id}'`);
  const found = await ask();
  if (found.record !== null || found.known || !(await migrateOnce(env, timeoutMs))) return found.record;
  return (await ask()).record;
}

/** The ready dataflows reading `stream` (not being deleted) and its declared schema. */
export async function lookupStream(env: Env, stream: string, timeoutMs: number): Promise<StreamRouting> {
  const ask = () => withDeadline(() => directoryStub(env, stream).routing(), timeoutMs, `the directory of stream '${stream}'`);
  let directory = await ask();
  if (!directory.synced && (await migrateOnce(env, timeoutMs))) directory = await ask();
  const records = await Promise.all(directory.members.map((id) => lookupDataflow(env, id, timeoutMs)));
  const dataflows = records.filter((r): r is DataflowRecord => r !== null && r.ready && !r.deleting);
  return { dataflows, schema: directory.schema };
}
