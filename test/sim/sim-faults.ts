/**
 * The fault injector of a simulated run: coordinator outages, and replica faults with at
 * most one replica per partition down at a time (or both, in both-down runs).
 */
import type { SimWorld } from "./sim-world.ts";

export async function faultLoop(w: SimWorld, stopAt: () => boolean): Promise<void> {
  while (!stopAt()) {
    await w.clock.sleep(100 + w.rng.int(400));
    if (stopAt()) return;
    if (w.rng.chance(0.15)) {
      await coordinatorOutage(w);
      continue;
    }
    const route = w.record().routes[w.rng.int(w.record().routes.length)];
    // One failure per partition at a time: both replicas up and holding their state.
    const intact = (name: string) => w.replicas.replica(name).fault === null && w.replicas.host(name).status() !== null;
    if (!route || route.status !== "healthy" || !route.standby || !intact(route.primary) || !intact(route.standby)) continue;
    if (w.options.bothDown && w.faults >= 2) continue;
    w.faults += 1;
    if (w.options.bothDown) await bothDown(w, route.partition, route.primary, route.standby);
    else await oneDown(w, route.partition, [route.primary, route.standby][w.rng.int(2)] ?? "");
  }
}

async function coordinatorOutage(w: SimWorld): Promise<void> {
  w.coordinatorUp = false;
  w.log("coordinator down");
  await w.clock.sleep(100 + w.rng.int(300));
  w.coordinatorUp = true;
  w.log("coordinator up");
}

/** Crash both replicas; check the partition reports unavailable; bring back both, or the last primary. */
async function bothDown(w: SimWorld, partition: number, primary: string, standby: string): Promise<void> {
  const pair = [primary, standby];
  for (const name of pair) w.replicas.inject(name, "crash");
  await w.clock.sleep(400 + w.rng.int(400));
  const status = w.record().routes[partition]?.status;
  if (status !== "unavailable") w.violations.push(`partition ${partition} reported ${status} with both replicas down`);
  // Only the one the routing last made primary may bring the partition back on its own:
  // the other may lack writes acknowledged while it was down.
  const lastPrimary = w.record().routes[partition]?.primary ?? primary;
  for (const name of w.rng.chance(0.5) ? pair : [lastPrimary]) w.replicas.inject(name, "heal");
}

/** One replica crashes, hangs, slows down or loses its storage; it may return as a zombie right after being replaced. */
async function oneDown(w: SimWorld, partition: number, victim: string): Promise<void> {
  const kind = (["crash", "hang", "slow", "wipe"] as const)[w.rng.int(4)] ?? "crash";
  w.replicas.inject(victim, kind);
  if (kind === "wipe") return;
  if (w.rng.chance(0.5)) {
    const giveUpAt = w.clock.now + 5_000;
    while (w.clock.now < giveUpAt) {
      await w.clock.sleep(10);
      const route = w.record().routes[partition];
      if (route && route.primary !== victim && route.standby !== victim) break;
    }
  } else {
    await w.clock.sleep(50 + w.rng.int(800));
  }
  w.replicas.inject(victim, "heal");
}
