/**
 * The upgrade to a control plane that scales out (issue 29, deliverable 4). Before it, the
 * object named "coordinator" held every dataflow's record, probe history, idle marker and
 * tombstone, and ran the one monitor. Now each dataflow's monitor object holds its own, and
 * the registry keeps an entry per dataflow. The registry moves what it finds in the old
 * layout on its first call or alarm after the upgrade; routers and readers that find a
 * stream or dataflow nobody wrote yet ask it to (`platform/control-plane.ts`). Repeatable:
 * monitors adopt idempotently, and the old keys go only once everything was moved.
 */
import type { MonitorRecords } from "./monitor-records.ts";
import type { RegistryContext } from "./registry-steps.ts";
import { listStreams } from "./stream-store.ts";

/**
 * Moves every dataflow of the old layout (`old`: the registry's own storage read with the
 * old keys) to its monitor, and writes every stream's directory.
 */
export async function migrateOldLayout(o: RegistryContext, old: MonitorRecords): Promise<void> {
  const records = old.list();
  const tombstones = old.tombstoneIds();
  if (records.length === 0 && tombstones.length === 0) return;
  for (const record of records) {
    if (!o.entries.read(record.id)) o.entries.put({ v: 1, id: record.id, spec: record.spec, createdAtMs: record.createdAtMs, deleting: record.deleting });
    await o.monitor(record.id).adopt(record.id, { record, health: old.health(record.id), idle: old.idleMarker(record.id), tombstone: old.tombstone(record.id) });
  }
  // Deleted dataflows' tombstones: a dataflow created again under the id starts above their epochs.
  const live = new Set(records.map((r) => r.id));
  for (const id of tombstones.filter((t) => !live.has(t))) await o.monitor(id).adopt(id, { record: null, health: null, idle: null, tombstone: old.tombstone(id) });
  const streams = new Set([...records.flatMap((r) => (r.spec.stream === undefined ? [] : [r.spec.stream])), ...listStreams(o.kv).map((s) => s.name)]);
  for (const stream of streams) await o.syncDirectory(stream);
  for (const id of new Set([...live, ...tombstones])) old.forget(id);
}
