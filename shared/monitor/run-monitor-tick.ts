/**
 * One monitor tick over all dataflows: probe every replica with a deadline, decide
 * (pure), persist, reconcile replicas to their routes, then advance recoveries and key-group moves. Used by
 * each dataflow monitor's alarm and by the simulator. Idempotent: a tick cut short anywhere is
 * completed by the next one.
 */
import type { DataflowRecord, HealthMap, PartitionRoute } from "../wire/routing.ts";
import { advanceRecovery, type RecoveryBudget } from "./advance-recovery.ts";
import type { ReleasedMemo } from "../moves/advance-move.ts";
import { advanceMoves } from "../moves/advance-moves.ts";
import { markCallFailures, tickErrors, type MonitorLog } from "./monitor-errors.ts";
import { desiredConfigs, isConfigured } from "./desired-config.ts";
import type { MonitorPort, ProbeResult } from "./monitor-port.ts";
import { planMonitorTick, replicasToProbe, type MonitorTuning } from "./plan-monitor-tick.ts";
import { noteRetiredProbes, retiredDue, retiredReplicas } from "./retired-probes.ts";
import { sendClockTicks } from "./send-ticks.ts";
import { syncStandby } from "./sync-standby.ts";

/** Where the tick reads and writes the monitor's records, and what it keeps of them in memory only. */
export interface MonitorStore {
  save(record: DataflowRecord, health: HealthMap): Promise<void>;
  /** What the releases of `dataflow`'s moves took (issue 28): lost with the object, then asked for again. */
  released(dataflow: string): ReleasedMemo;
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
 * @param now the clock that times key-group moves' pauses (default: the tick's start, `nowMs`).
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
  now: () => number = () => nowMs,
): Promise<{ recoveryPending: boolean }> {
  const tick: Tick = { port: markCallFailures(rawPort), store, nowMs, now, tuning, log, budget: { calls: RECOVERY_CALLS_PER_TICK } };
  await Promise.all(records.filter(({ record }) => record.ready && !record.deleting).map(({ record, health }) => tickDataflow(tick, record, health)));
  return { recoveryPending: tick.budget.calls <= 0 };
}

/** What every dataflow's share of one tick works with. */
interface Tick {
  port: MonitorPort;
  store: MonitorStore;
  nowMs: number;
  /** The current time (moves stamp their release and switch with it). */
  now: () => number;
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
  // While a replica of a partition that can still serve is missing probes, its fail-over comes first: moves wait a tick.
  const suspect = record.routes.some((route) => route.status !== "unavailable" && [route.primary, route.standby].some((name) => name !== null && probes.get(name)?.ok === false));
  if (!suspect) await advanceKeyGroupMoves(tick, record, health, (name) => probes.get(name)?.ok === true, errors.report);
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

/**
 * Advances the record's key-group moves (issue 28). After a switch, both partitions'
 * replicas are told their new epoch at once (those that do not answer are told by a later
 * tick's reconciliation), so the move ends, and the next one starts, in this tick.
 */
async function advanceKeyGroupMoves(tick: Tick, record: DataflowRecord, health: HealthMap, answered: (replica: string) => boolean, report: Report): Promise<void> {
  if (record.moves.length === 0) return;
  let saveError: { err: unknown } | null = null;
  const save = () => tick.store.save(record, health).catch((err: unknown) => Promise.reject((saveError = { err }).err));
  const reconfigure = async (routes: readonly PartitionRoute[]) => {
    const told = routes.flatMap((route) => desiredConfigs(record, route).map((desired) => tick.port.configure(desired.name, desired).catch(() => undefined)));
    await Promise.all(told);
  };
  try {
    await advanceMoves(record, { port: tick.port, memo: tick.store.released(record.id), now: tick.now, save, reconfigure, answered });
  } catch (err) {
    if (saveError) throw err;
    // Failed calls are answers to a move (it waits); this is a bug, reported: the move resumes from its saved phase next tick.
    report(record.moves[0]?.from ?? 0, "key-group move", err);
  }
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
