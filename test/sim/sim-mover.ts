/**
 * The mover of the `moves` workload (issue 28): while producers write and faults strike, it
 * asks the first dataflow's monitor for key-group moves, as a rescale request would: between
 * two of its ticks (the object runs one request at a time), it adds a move to the stored
 * record (phase `release`) and wakes the monitor, whose ticks carry it out
 * (`shared/moves/`). Most moved groups hold some of the simulator's keys, so their state,
 * dedup and records in flight really move. In half the seeds its first request grows the
 * dataflow by a partition instead, as `PUT` with a higher count does (`plan-rescale.ts`):
 * the new pair is created, then some 20 queued moves even out the groups.
 */
import { keyGroupMapOf, keyGroupOf, ownerOf } from "../../shared/keygroups/key-groups.ts";
import type { DataflowRecord, KeyGroupMove } from "../../shared/wire/routing.ts";
import type { SimWorld } from "./sim-world.ts";
import { planGrowth } from "../../shared/moves/plan-rescale.ts";
import { desiredConfigs } from "../../shared/monitor/desired-config.ts";
import { CursorReader } from "./sim-checks.ts";

/** Moves in flight at once, at most. */
const MAX_IN_FLIGHT = 2;

/** Requests 2 to 7 moves, 20-170 ms apart, while the producers write; in half the seeds the first is a growth by one partition. */
export async function moveLoop(w: SimWorld, keys: readonly string[]): Promise<void> {
  const dataflow = w.first;
  const planned = 2 + w.rng.int(6);
  let grow = w.rng.chance(0.5);
  while (w.coverage.moves.requested < planned && !w.clientsDone) {
    await w.clock.sleep(20 + w.rng.int(150));
    const record = dataflow.record();
    if (!dataflow.monitor.up || dataflow.monitor.ticking || record.moves.length >= MAX_IN_FLIGHT) continue;
    const next: DataflowRecord = structuredClone(record);
    if (grow) {
      grow = false;
      growByOne(w, next);
    } else {
      const move = planMove(w, next, keys);
      if (!move) continue;
      next.moves.push(move);
      next.nextMove = move.id + 1;
      w.log(`mover: move ${move.id} of key groups ${move.groups.join(", ")} from partition ${move.from} to ${move.to}`);
    }
    dataflow.stored = JSON.stringify(next);
    w.coverage.moves.requested += next.moves.length - record.moves.length;
    dataflow.monitor.schedule.hurry(dataflow.id);
    dataflow.monitor.wakeAtMs = w.clock.now;
  }
}

/** Grows `record` (mutated) by a partition, as the monitor does for a `PUT` with a higher count: the new pair is created first. */
function growByOne(w: SimWorld, record: DataflowRecord): void {
  const planned = planGrowth(record, record.routes.length + 1, w.clock.now);
  if ("refused" in planned) throw new Error(`the mover's growth was refused: ${planned.refused}`);
  for (const route of planned.routes) {
    for (const init of desiredConfigs(record, route)) w.replicas.host(init.name).init({ ...init, create: true });
    w.first.readers.push(new CursorReader(`${record.id} partition ${route.partition}`, w.violations));
  }
  w.log(`mover: grows ${record.id} to ${record.routes.length} partitions, ${record.moves.length} moves queued`);
}

/** One to three groups of one partition (mostly groups holding keys), none already moving, to another partition. */
function planMove(w: SimWorld, record: DataflowRecord, keys: readonly string[]): KeyGroupMove | null {
  const map = keyGroupMapOf(record);
  const moving = new Set(record.moves.flatMap((m) => m.groups));
  const from = w.rng.int(map.partitions);
  const others = Array.from({ length: map.partitions }, (_, p) => p).filter((p) => p !== from);
  const to = others[w.rng.int(others.length)];
  if (to === undefined) return null;
  const owned = (g: number) => ownerOf(map, g) === from && !moving.has(g);
  const withKeys = [...new Set(keys.map((k) => keyGroupOf(k, map.groups)))].filter(owned);
  const groups = new Set<number>();
  for (let i = 1 + w.rng.int(3); i > 0; i--) {
    const g = withKeys.length > 0 && w.rng.chance(0.85) ? withKeys[w.rng.int(withKeys.length)] : w.rng.int(map.groups);
    if (g !== undefined && owned(g)) groups.add(g);
  }
  if (groups.size === 0) return null;
  return { id: record.nextMove, groups: [...groups].sort((a, b) => a - b), from, to, phase: "release", startedAtMs: w.clock.now, releasedAtMs: null, switchedAtMs: null, failure: null };
}
