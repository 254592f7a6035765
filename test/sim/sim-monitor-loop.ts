/**
 * The monitors of a simulated run (issue 29): one loop per dataflow, each running the real
 * alarm step (`runDueTicks` over the real `MonitorSchedule`) whenever its schedule says the
 * dataflow is due, or at once after a report of a failed call (from a router, a reader or an
 * upstream primary), while its object is up. A tick sometimes dies part-way (what it had not
 * saved is lost), always when its object was restarted, which also loses its schedule. A
 * tick depends on its own monitor only (a broken variant makes it depend on every one, as
 * when one object monitored them all).
 */
import type { MonitorPort } from "../../shared/monitor/monitor-port.ts";
import { runDueTicks, type DueTickHost } from "../../shared/monitor/run-due-ticks.ts";
import { HealthMapSchema, type DataflowRecord, type HealthMap } from "../../shared/wire/routing.ts";
import type { SimDataflow } from "./sim-dataflows.ts";
import { SIM_TUNING, type SimMonitor } from "./sim-monitors.ts";
import type { SimWorld } from "./sim-world.ts";
import { InjectedFailure, isFailedCall } from "./violations.ts";

/** How often a monitor's loop looks whether its dataflow is due (a report makes it due at once), simulated ms. */
const POLL_MS = 5;

export async function monitorLoop(w: SimWorld, stopAt: () => boolean): Promise<void> {
  await Promise.all(w.dataflows.map((dataflow) => monitorLoopOf(w, dataflow, stopAt)));
}

async function monitorLoopOf(w: SimWorld, dataflow: SimDataflow, stopAt: () => boolean): Promise<void> {
  const own = dataflow.monitor;
  while (!stopAt()) {
    await w.clock.sleep(POLL_MS);
    const monitors = w.hooks.monitorsOf?.(own, w.dataflows.map((d) => d.monitor)) ?? [own];
    if (monitors.some((m) => !m.up) || own.wakeAtMs > w.clock.now) continue;
    const restarted = own.restartPending;
    own.restartPending = false;
    await monitorTick(w, dataflow, w.rng.chance(0.05) || restarted, monitors);
    // A restarted object lost what it kept in memory: its schedule starts afresh (due at once).
    if (restarted) own.restart();
  }
}

/**
 * One alarm of `dataflow`'s monitor (with `force`, due whatever its schedule says); with
 * `dies`, it stops after a random number of calls; each call waits as long as the slowest
 * of `monitors` is slow. The real monitor never stops for good, so a run ends with one
 * forced tick per monitor that completes: it finishes whatever a dead tick left
 * half-written (a clock tick logged by the primary only).
 */
export async function monitorTick(w: SimWorld, dataflow: SimDataflow, dies: boolean, monitors: readonly SimMonitor[] = [dataflow.monitor], force = false): Promise<void> {
  const own = dataflow.monitor;
  let callsLeft = dies ? w.rng.int(12) : Number.POSITIVE_INFINITY;
  // A monitor object that goes down mid-tick loses the rest of the tick, as a crash would.
  const alive = () => callsLeft-- > 0 && own.up;
  const slowMs = () => Math.max(0, ...monitors.map((m) => m.slowMs));
  const inner = w.replicas.port(40, 20);
  const port = new Proxy(inner, {
    get: (target, key: keyof MonitorPort) => async (...args: never[]) => {
      const delay = slowMs();
      if (delay > 0) await w.clock.sleep(delay);
      return alive() ? (target[key] as (...a: never[]) => Promise<unknown>)(...args) : Promise.reject(new InjectedFailure("monitor died"));
    },
  }) as MonitorPort;
  const save = async (r: DataflowRecord, h: HealthMap) => {
    if (!alive()) throw new InjectedFailure("monitor died");
    if (r.id !== dataflow.id) throw new Error(`the monitor of ${dataflow.id} saved ${r.id}`);
    const before = dataflow.record();
    // Events are capped (the oldest leave): new ones are those the stored record lacks.
    const stored = new Set(before.events.map((e) => JSON.stringify(e)));
    for (const e of r.events.filter((e) => !stored.has(JSON.stringify(e)))) {
      w.log(`monitor: ${r.id} ${e.kind} p${e.partition}: ${e.detail}`);
      if (e.kind === "move-finished") w.coverage.moves.finished += 1;
      if (e.kind === "move-given-up") w.coverage.moves.givenUp += 1;
    }
    w.hooks.save?.(r, before, h, (name) => (w.replicas.replica(name).fault === null ? w.replicas.status(name) : null));
    dataflow.stored = JSON.stringify(r);
    dataflow.storedHealth = JSON.stringify(h);
    w.takeovers.saved(r, w.clock.now);
  };
  const health = HealthMapSchema.parse(JSON.parse(dataflow.storedHealth));
  const host: DueTickHost = {
    list: () => [structuredClone(w.load(dataflow))],
    health: () => health,
    tickStore: () => ({ save, released: () => own.released }),
    setIdleMarker: () => undefined,
    port: () => port,
    finishDeletion: async () => undefined,
    now: () => w.clock.now,
    // Errors the monitor reports are bugs (failed calls are never reported): each is a violation.
    log: { error: (context: string, err: unknown) => w.violations.exception(`monitor ${context}`, err) },
  };
  if (force) own.schedule.hurry(dataflow.id);
  own.ticking = true;
  try {
    own.ticked(await runDueTicks(host, own.schedule, w.clock.now, SIM_TUNING));
  } catch (err) {
    if (!isFailedCall(err)) w.violations.exception("monitor tick", err);
    w.log(`monitor tick died: ${String(err)}`);
    // The real alarm is re-armed a heartbeat later after a tick that throws.
    own.ticked(w.clock.now + SIM_TUNING.heartbeatMs);
  } finally {
    own.ticking = false;
  }
  if (dies) w.log(`monitor of ${dataflow.id} died mid-tick`);
}
