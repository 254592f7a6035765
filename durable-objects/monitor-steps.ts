/**
 * What a dataflow's monitor object does besides its alarm (issue 29): create its one
 * record and configure the replicas, link or unlink a stage reading it (issue 27), count
 * the results it has emitted (where a new stage starts), and adopt the state a registry
 * from before the upgrade held for it. Each works on the monitor's own storage only.
 */
import type { FluxConfig } from "../shared/config.ts";
import { desiredConfigs } from "../shared/monitor/desired-config.ts";
import type { MonitorPort } from "../shared/monitor/monitor-port.ts";
import type { IdleMarker } from "../shared/monitor/probe-schedule.ts";
import { changedFields, isSameSpec, planDataflow } from "../shared/plan-dataflow.ts";
import { planGrowth, planRebalance, type RescaleRefusal } from "../shared/moves/plan-rescale.ts";
import type { DataflowSpec } from "../shared/wire/dataflow-spec.ts";
import type { DataflowRecord, HealthMap, PartitionRoute } from "../shared/wire/routing.ts";
import type { MonitorRecords } from "./monitor-records.ts";

/**
 * What creating a dataflow in its monitor found or did: `rescaling` when only its partition
 * count changed and the moves are planned (issue 28); `refused` when that cannot be done (why).
 */
export type MonitorCreateResult =
  | { status: "created" | "unchanged" | "conflict" | "deleting" | "rescaling"; record: DataflowRecord }
  | { status: "refused"; record: DataflowRecord; refusal: RescaleRefusal };

/** What the monitor of a dataflow from before the upgrade takes over from the registry. */
export interface AdoptedState {
  record: DataflowRecord | null;
  health: HealthMap | null;
  idle: IdleMarker | null;
  /** The highest epoch a deleted dataflow of this id reached (0: none). */
  tombstone: number;
}

/**
 * Creates dataflow `id` (its first epoch above any deleted one's), configures every replica
 * and marks it ready; or confirms an identical one, finishing a creation that was
 * interrupted; or, when only the partition count differs, rescales it (`rescaleDataflow`).
 * Another difference is a conflict; one being deleted stays so.
 */
export async function createDataflow(
  records: MonitorRecords,
  portFor: (records: DataflowRecord[]) => MonitorPort,
  config: FluxConfig,
  id: string,
  spec: DataflowSpec,
): Promise<MonitorCreateResult> {
  const existing = records.read(id);
  if (existing?.deleting) return { status: "deleting", record: existing };
  if (existing && !isSameSpec(existing.spec, spec)) {
    const onlyPartitions = changedFields(existing.spec, spec).join() === "partitions";
    return existing.ready && onlyPartitions ? rescaleDataflow(records, portFor, config, existing, spec.partitions) : { status: "conflict", record: existing };
  }
  if (existing?.ready && rescaleUnderway(records, existing)) return { status: "rescaling", record: existing };
  const record = existing ?? planDataflow(id, spec, Date.now(), config.locationHints, records.tombstone(id) + 1);
  if (!existing) records.put(record);
  if (!record.ready) {
    await createReplicas(portFor([record]), record, record.routes);
    record.ready = true;
    records.put(record);
  }
  return { status: existing?.ready ? "unchanged" : "created", record };
}

/**
 * The same spec sent again while its groups are uneven or moving (issue 28): moves under
 * way go on; with none, moves are queued that even the shares out (a rescale whose moves
 * were given up finishes this way). @returns whether moves are under way now.
 */
function rescaleUnderway(records: MonitorRecords, record: DataflowRecord): boolean {
  if (record.moves.length > 0) return true;
  if (planRebalance(record, Date.now()) === 0) return false;
  records.put(record);
  return true;
}

/**
 * Grows a ready dataflow to `partitions` partitions (issue 28): creates the new partitions'
 * replicas, then stores the record with their routes and the moves that even out the key
 * groups (`plan-rescale.ts`), which the monitor's ticks carry out while ingest goes on. A
 * replica that cannot be created fails the request before anything is stored (resending it
 * is safe: creating is idempotent).
 */
async function rescaleDataflow(
  records: MonitorRecords,
  portFor: (records: DataflowRecord[]) => MonitorPort,
  config: FluxConfig,
  existing: DataflowRecord,
  partitions: number,
): Promise<MonitorCreateResult> {
  const record = structuredClone(existing);
  const planned = planGrowth(record, partitions, Date.now(), config.locationHints);
  if ("refused" in planned) return { status: "refused", record: existing, refusal: planned };
  await createReplicas(portFor([record]), record, planned.routes);
  records.put(record);
  return { status: "rescaling", record };
}

/** Creates and configures the replicas of `routes` (placed by the record's location hints). @throws Error when one refuses. */
async function createReplicas(port: Pick<MonitorPort, "configure">, record: DataflowRecord, routes: readonly PartitionRoute[]): Promise<void> {
  await Promise.all(
    routes.flatMap((route) =>
      desiredConfigs(record, route).map(async (init) => {
        const reply = await port.configure(init.name, { ...init, create: true });
        if (reply.status !== "ok") throw new Error(`replica ${init.name} refused its configuration: ${reply.status}`);
      }),
    ),
  );
}

/**
 * Adds (or with `add` false removes) `stage` as a reader of `record` and tells its replicas
 * under new route versions, so its primaries deliver to it. @returns the replicas that did
 * not take their new configuration yet (the monitor retries them: `desired-config.ts`
 * compares readers).
 */
export async function linkReader(records: MonitorRecords, port: Pick<MonitorPort, "configure">, record: DataflowRecord, stage: string, add: boolean): Promise<string[]> {
  const readers = add ? [...new Set([...record.readers, stage])].sort() : record.readers.filter((r) => r !== stage);
  if (readers.join(",") === record.readers.join(",")) return [];
  record.readers = readers;
  for (const route of record.routes) route.version += 1;
  records.put(record);
  const missed: string[] = [];
  const told = record.routes.flatMap((route) => desiredConfigs(record, route)).map(async (init) => {
    const reply = await port.configure(init.name, init).catch(() => null);
    if (reply?.status !== "ok") missed.push(init.name);
  });
  await Promise.all(told);
  return missed;
}

/** How many results `record`'s partitions have emitted so far, from their primaries (null: one did not answer). */
export async function resultsSoFar(port: Pick<MonitorPort, "probe">, record: DataflowRecord): Promise<number | null> {
  const counts = await Promise.all(record.routes.map(async (route) => (await port.probe(route.primary).catch(() => null))?.outputSeq ?? null));
  return counts.includes(null) ? null : (counts as number[]).reduce((a, b) => a + b, 0);
}

/**
 * Takes over what the registry held for this dataflow before the upgrade. Idempotent: a
 * record already here wins (the migration may be repeated after it was cut short).
 * @returns whether a record is now watched.
 */
export function adoptState(records: MonitorRecords, id: string, state: AdoptedState): boolean {
  records.raiseTombstone(id, state.tombstone);
  if (records.read(id) !== null) return true;
  if (state.record === null) return false;
  records.put(state.record);
  if (state.health !== null) records.putHealth(id, state.health);
  records.setIdleMarker(id, state.idle);
  return true;
}
