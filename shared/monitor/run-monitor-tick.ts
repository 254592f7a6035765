/**
 * One monitor tick over all dataflows: probe every replica with a deadline, decide
 * (pure), persist, reconcile replicas to their routes, then advance recoveries. Used by
 * each dataflow monitor's alarm and by the simulator. Idempotent: a tick cut short anywhere is
 * completed by the next one.
 */
import type { DataflowRecord, HealthMap } from "../wire/routing.ts";
import { advanceRecovery, type RecoveryBudget } from "./advance-recovery.ts";
import { markCallFailures, tickErrors, type MonitorLog } from "./monitor-errors.ts";
import { desiredConfigs, isConfigured } from "./desired-config.ts";
import type { MonitorPort, ProbeResult } from "./monitor-port.ts";
import { planMonitorTick, replicasToProbe, type MonitorTuning } from "./plan-monitor-tick.ts";
import { noteRetiredProbes, retiredDue, retiredReplicas } from "./retired-probes.ts";
import { sendClockTicks } from "./send-ticks.ts";
import { syncStandby } from "./sync-standby.ts";

/** Where the tick reads and writes the monitor's records. */
export interface MonitorStore {
  save(record: DataflowRecord, health: HealthMap): Promise<void>;
}

/**
 * Replica calls one tick may spend on recoveries, across all partitions: a tick stays
 * short, so probing (and fail-over) never waits long behind a large seeding.
 */
const RECOVERY_CALLS_PER_TICK = 40;

/**
 * Runs one tick for each ready dataflow in `records` (mutated in place).
 * @param log receives errors that are not failed replica calls (bugs), with context;
 *   they are also kept as `monitor-error` events of the dataflow.
 * @returns `recoveryPending` when a recovery used up its share of calls and should
 *   continue right away rather than a heartbeat later.
 */
export async function runMonitorTick(
  rawPort: MonitorPort,
  store: MonitorStore,
  records: readonly { record: DataflowRecord; health: HealthMap }[],
  nowMs: number,
  tuning: MonitorTuning,
  log: MonitorLog,
): Promise<{ recoveryPending: boolean }> {
  const tick: Tick = { port: markCallFailures(rawPort), store, nowMs, tuning, log, budget: { calls: RECOVERY_CALLS_PER_TICK } };
  await Promise.all(records.filter(({ record }) => record.ready && !record.deleting).map(({ record, health }) => tickDataflow(tick, record, health)));
  return { recoveryPending: tick.budget.calls <= 0 };
}

/** What every dataflow's share of one tick works with. */
interface Tick {
  port: MonitorPort;
  store: MonitorStore;
  nowMs: number;
  tuning: MonitorTuning;
  log: MonitorLog;
  budget: RecoveryBudget;
}

type Report = (partition: number, context: string, err: unknown) => void;

async function tickDataflow(tick: Tick, record: DataflowRecord, health: HealthMap): Promise<void> {
  const { port, store, nowMs } = tick;
  const errors = tickErrors(tick.log, record, nowMs);
  // Retired replicas' probes run alongside but are awaited last (`retired-probes.ts`).
  const retired = retiredReplicas(record);
  const retiredProbes = probeAll(port, retiredDue(retired, health, nowMs, tick.tuning.missSpacingMs));
  const probes = await probeAll(port, replicasToProbe(record).filter((name) => !retired.has(name)));
  planMonitorTick(record, health, probes, nowMs, tick.tuning);
  await store.save(record, health);
  await reconcile(port, record, probes, errors.report);
  await Promise.all(
    record.routes.map((route) =>
      syncStandby(port, route, statusOf(probes, route.primary), route.standby ? statusOf(probes, route.standby) : null).catch((err: unknown) =>
        errors.report(route.partition, "standby sync", err),
      ),
    ),
  );
  const attached = await advanceRecoveries(tick, record, health, errors.report);
  await store.save(record, health);
  // A standby was attached under a new epoch: tell both replicas now, not a heartbeat later
  // (the fresh one was not among this tick's probes: ask it now).
  if (attached) await reconcile(port, record, new Map([...probes, ...(await probeAll(port, freshReplicas(record)))]), errors.report);
  // Last, so a slow tick write never delays fail-over or recovery; only to replicas that answered.
  await sendClockTicks(port, record, nowMs, (name) => statusOf(probes, name) !== null, errors.report);
  const late = await retiredProbes;
  if (late.size > 0) {
    noteRetiredProbes(health, late, nowMs);
    await reconcile(port, record, late, errors.report);
    await store.save(record, health);
  }
  if (errors.takeUnsaved()) await store.save(record, health);
}

/** Advances every recovering partition's recovery. @returns whether a standby was attached (or a recovery finished). */
async function advanceRecoveries(tick: Tick, record: DataflowRecord, health: HealthMap, report: Report): Promise<boolean> {
  let attached = false;
  for (const route of record.routes) {
    if (route.status !== "recovering") continue;
    // A failed save is the monitor's own storage failing: it ends the tick, unlike a replica that did not answer.
    let saveError: { err: unknown } | null = null;
    const save = () => tick.store.save(record, health).catch((err: unknown) => Promise.reject((saveError = { err }).err));
    try {
      const event = await advanceRecovery(tick.port, record, route, tick.budget, save);
      if (event) record.events.push({ atMs: tick.nowMs, ...event });
      attached ||= route.recovery?.phase === "attached" || event?.kind === "recovery-finished";
    } catch (err) {
      if (saveError) throw err;
      // A replica did not answer (or a bug, reported); the recovery resumes from its last saved step next tick.
      report(route.partition, "recovery", err);
    }
  }
  return attached;
}

/** Replicas being seeded or attached, which this tick's probes may predate. */
function freshReplicas(record: DataflowRecord): string[] {
  return record.routes.flatMap((route) => (route.recovery ? [route.recovery.replica] : []));
}

function statusOf(probes: ReadonlyMap<string, ProbeResult>, name: string) {
  const probe = probes.get(name);
  return probe?.ok ? probe.status : null;
}

async function probeAll(port: MonitorPort, names: readonly string[]): Promise<Map<string, ProbeResult>> {
  const results = await Promise.all(
    names.map(async (name): Promise<[string, ProbeResult]> => {
      try {
        return [name, { ok: true, status: await port.probe(name) }];
      } catch (err) {
        return [name, { ok: false, error: err instanceof Error ? err.message : String(err) }];
      }
    }),
  );
  return new Map(results);
}

/** Sends each answering replica the configuration its route wants; retired ones leave the list once told. */
async function reconcile(
  port: MonitorPort,
  record: DataflowRecord,
  probes: ReadonlyMap<string, ProbeResult>,
  report: Report,
): Promise<void> {
  await Promise.all(
    record.routes.flatMap((route) =>
      desiredConfigs(record, route).map(async (desired) => {
        const probe = probes.get(desired.name);
        if (!probe?.ok) return;
        let done = isConfigured(probe.status, desired);
        if (!done) {
          try {
            done = (await port.configure(desired.name, desired)).status === "ok";
          } catch (err) {
            report(route.partition, `configuring ${desired.name}`, err);
            done = false;
          }
        }
        if (done && desired.role === "retired") route.retired = route.retired.filter((name) => name !== desired.name);
      }),
    ),
  );
}
