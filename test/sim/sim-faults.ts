/**
 * The fault injector of a simulated run (issue 10): a planned number of replica faults,
 * timed against client activity — the first once a random share of the batches has been
 * acknowledged, the next ones often while a partition is recovering from the previous
 * fault — plus faults of one dataflow's monitor object (issue 29: down, slow or restarted
 * mid-tick), often while another dataflow fails over. Normal runs keep at most one replica per partition
 * down at a time (a fresh replica being seeded counts as the one); both-down runs take
 * both replicas that hold the partition's data down at once, every time.
 */
import type { PartitionRoute } from "../../shared/wire/routing.ts";
import type { SimDataflow } from "./sim-dataflows.ts";
import type { SimWorld } from "./sim-world.ts";

/** A partition of one of the world's dataflows (a fault may hit any stage of a pipeline). */
type Target = { dataflow: SimDataflow; route: PartitionRoute };

/** How long the injector waits for a partition in the state a fault needs before giving up on that fault. */
const WAIT_LIMIT_MS = 5_000;

export async function faultLoop(w: SimWorld, total: number): Promise<void> {
  // 1 fault in 45% of seeds, 2 in 35%, 3 in 20%.
  const planned = 1 + (w.rng.chance(0.55) ? 1 + (w.rng.chance(0.35) ? 1 : 0) : 0);
  const firstAt = Math.floor(w.rng.next() * 0.6 * total);
  await until(w, () => w.acked.size >= firstAt, SETTLE_WAIT);
  const monitorFaults: Promise<void>[] = [];
  for (let i = 0; i < planned; i++) {
    // After the first fault, usually strike while the partition is recovering from it.
    const inRecovery = i > 0 && w.rng.chance(0.7);
    if (!inRecovery) await w.clock.sleep(w.rng.int(200));
    // A partition recovering soon (the last fault's), else any healthy one.
    const target = (inRecovery ? await until(w, () => pick(w, true), WAIT_LIMIT_MS) : null) ?? (await until(w, () => pick(w, false), WAIT_LIMIT_MS));
    if (!target) continue;
    // Not awaited: a monitor fails as the replica does, usually another dataflow's (issue 29).
    const failMonitor = (kind: MonitorFault) => monitorFaults.push(monitorFault(w, monitorToFail(w, target.dataflow), kind));
    if (w.rng.chance(0.3)) failMonitor(MONITOR_FAULTS[w.rng.int(3)] ?? "monitor-down");
    if (w.options.bothDown) await bothDown(w, target);
    else await oneDown(w, target, failMonitor);
  }
  await Promise.all(monitorFaults);
}

/** Polls every 10 ms until `found` gives a value, or `limitMs` passes. */
async function until<T>(w: SimWorld, found: () => T | null | false, limitMs: number): Promise<T | null> {
  const giveUpAt = w.clock.now + limitMs;
  for (;;) {
    const value = found();
    if (value) return value;
    if (w.clock.now >= giveUpAt) return null;
    await w.clock.sleep(10);
  }
}

/** Long enough for any client to finish; the first fault waits for acknowledgements at most this long. */
const SETTLE_WAIT = 20_000;

/** A partition of any dataflow a fault may hit now: a recovering one (`inRecovery`), or a healthy one with both replicas intact. */
function pick(w: SimWorld, inRecovery: boolean): Target | null {
  const intact = (name: string) => w.replicas.replica(name).fault === null && w.replicas.status(name) !== null;
  const fits = (r: PartitionRoute) =>
    inRecovery
      ? r.status === "recovering" && r.recovery !== null && intact(r.primary) && w.replicas.replica(r.recovery.replica).fault === null
      : r.status === "healthy" && r.standby !== null && intact(r.primary) && intact(r.standby);
  const candidates = w.dataflows.flatMap((dataflow) => dataflow.record().routes.filter(fits).map((route) => ({ dataflow, route })));
  return candidates[w.rng.int(candidates.length)] ?? null;
}

const MONITOR_FAULTS = ["monitor-down", "monitor-slow", "monitor-restart"] as const;
type MonitorFault = (typeof MONITOR_FAULTS)[number];

/** Whose monitor fails with a replica of `victim`'s: another dataflow's (when there is one) three times in four. */
function monitorToFail(w: SimWorld, victim: SimDataflow): SimDataflow {
  const others = w.dataflows.filter((d) => d !== victim);
  return others.length > 0 && w.rng.chance(0.75) ? (others[w.rng.int(others.length)] ?? victim) : victim;
}

/**
 * One dataflow's monitor object fails: down for 200-1000 ms (its tick in progress dies), slow
 * for 300-1000 ms (each of its calls 40-120 ms late), or restarted (its next tick dies part-way).
 */
async function monitorFault(w: SimWorld, dataflow: SimDataflow, kind: MonitorFault): Promise<void> {
  const monitor = dataflow.monitor;
  w.count(kind, false);
  w.log(`${kind}: the monitor of ${dataflow.id}`);
  if (kind === "monitor-restart") {
    monitor.restartPending = true;
    return;
  }
  monitor.disturb(w.clock.now, kind === "monitor-down" ? { up: false } : { slowMs: 40 + w.rng.int(80) });
  await w.clock.sleep(kind === "monitor-down" ? 200 + w.rng.int(800) : 300 + w.rng.int(700));
  monitor.restore(w.clock.now);
  w.log(`the monitor of ${dataflow.id} is back`);
}

/**
 * Crash both replicas that hold the partition's data (primary and standby, or primary and
 * the fresh replica being seeded); check it reports unavailable; bring back both, or the
 * last primary only.
 */
async function bothDown(w: SimWorld, { dataflow, route }: Target): Promise<void> {
  const second = route.standby ?? route.recovery?.replica ?? "";
  const pair = [route.primary, second];
  w.count("both-down", true, route.status === "recovering", dataflow !== w.first);
  w.coverage.bothDown += 1;
  for (const name of pair) w.replicas.inject(name, "crash");
  const crashedAt = w.clock.now;
  const dueAtMs = dataflow.monitor.wakeAtMs;
  await w.clock.sleep(400 + w.rng.int(400));
  const status = dataflow.record().routes[route.partition]?.status;
  // Its own monitor must have been up and quick, and have had reason to look (its alarm, or a
  // report of a failed call) 300 ms ago or more: another monitor does not matter (issue 29).
  const noticed = w.clock.now - dataflow.monitor.owedFrom(crashedAt, dueAtMs) >= 300;
  if (status !== "unavailable" && noticed && !dataflow.monitor.disturbedBetween(crashedAt, w.clock.now)) w.violations.add("unavailable", `${dataflow.id} partition ${route.partition} reported ${status} with both replicas down`);
  // Only the one the routing last made primary may bring the partition back on its own:
  // the other may lack writes acknowledged while it was down.
  const lastPrimary = dataflow.record().routes[route.partition]?.primary ?? route.primary;
  for (const name of w.rng.chance(0.5) ? pair : [lastPrimary]) w.replicas.inject(name, "heal");
}

/**
 * One replica crashes, hangs, slows down or loses its storage: in a healthy partition the
 * primary or the standby, in a recovering one the fresh replica being seeded. It may
 * return as a zombie right after being replaced.
 */
async function oneDown(w: SimWorld, { dataflow, route }: Target, failMonitor: (kind: MonitorFault) => void): Promise<void> {
  const recovering = route.status === "recovering" && route.recovery !== null;
  const victim = (recovering ? route.recovery?.replica : [route.primary, route.standby][w.rng.int(2)]) ?? route.primary;
  const kind = (["crash", "hang", "slow", "wipe"] as const)[w.rng.int(4)] ?? "crash";
  w.count(kind, true, recovering, dataflow !== w.first);
  w.replicas.inject(victim, kind);
  if (!recovering && victim === route.primary && (kind === "crash" || kind === "hang")) {
    w.takeovers.expect(dataflow.id, route.partition, victim, w.clock.now, dataflow.monitor.wakeAtMs);
    // Three times in four a takeover is owed, a monitor goes down (or slow) with it: does the takeover wait for that monitor?
    if (w.rng.chance(0.75)) failMonitor(w.rng.chance(0.7) ? "monitor-down" : "monitor-slow");
  }
  if (kind === "wipe") return;
  if (w.rng.chance(0.5)) {
    await until(w, () => {
      const now = dataflow.record().routes[route.partition];
      return now !== undefined && now.primary !== victim && now.standby !== victim && now.recovery?.replica !== victim;
    }, WAIT_LIMIT_MS);
  } else {
    await w.clock.sleep(50 + w.rng.int(800));
  }
  w.takeovers.healed(victim, w.clock.now);
  w.replicas.inject(victim, "heal");
}
