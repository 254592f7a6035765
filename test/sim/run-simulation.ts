/**
 * One seeded run of the whole protocol in simulation (issues 4, 10): producers post
 * through routers, replicas fail and return, the monitor takes over and recovers, readers
 * follow each partition's output cursor; then the run settles and the invariants are
 * checked, the golden run among them.
 */
import { keyGroupMapOf, partitionOfKey } from "../../shared/keygroups/key-groups.ts";
import { checkGolden } from "./golden.ts";
import { produce, readLoop, SIM_KEYS } from "./sim-actors.ts";
import { moveLoop } from "./sim-mover.ts";
import { monitorLoop, monitorTick } from "./sim-monitor-loop.ts";
import { checkAcrossPartitions, checkSettled, checkWriters } from "./sim-checks.ts";
import type { WindowResult } from "../../shared/wire/window-result.ts";
import { faultLoop } from "./sim-faults.ts";
import { checkStage, stageLag } from "./stage-checks.ts";
import { HEARTBEAT_MS, SimWorld, type Batch, type FaultCoverage, type SimOptions } from "./sim-world.ts";
import type { Violation } from "./violations.ts";

export interface SimResult {
  seed: number;
  violations: Violation[];
  trace: string[];
  stats: { batches: number; simMs: number; coverage: FaultCoverage };
}

export async function runSimulation(seed: number, options: SimOptions = {}): Promise<SimResult> {
  const w = new SimWorld(seed, options);
  const producers = Array.from({ length: 1 + w.rng.int(3) }, (_, i) => `p${i}`);
  const counts = producers.map(() => 4 + w.rng.int(8));
  let settled = false;
  const clients = Promise.all(producers.flatMap((p, i) => [0, 1].map((lane) => produce(w, p, lane, counts[i] ?? 0)))).then(() => {
    w.clientsDone = true;
  });
  const loops = [
    ["monitor", monitorLoop(w, () => settled)],
    ["reader", readLoop(w, () => settled)],
    ["faults", faultLoop(w, counts.reduce((a, b) => a + b, 0)).finally(() => (w.faultsDone = true))],
    ...(w.options.workload === "moves" ? ([["mover", moveLoop(w, SIM_KEYS)]] as const) : []),
  ] as const;
  for (const [name, loop] of loops) loop.catch((err: unknown) => w.violations.exception(`simulator ${name} loop`, err, "simulator"));
  // Producers give up on a batch after the settle limit, so they always finish well within this.
  await w.clock.run(Math.max(60_000, 2 * w.settleLimitMs), () => w.clientsDone && w.faultsDone);
  await clients;
  await settle(w);
  settled = true;
  await w.clock.run(w.clock.now + 1_000);
  const lastTick = Promise.all(w.dataflows.map((dataflow) => monitorTick(w, dataflow, false, [dataflow.monitor], true)));
  await w.clock.run(w.clock.now + 1_000);
  await lastTick;
  // Stages catch up with what the last tick moved (deliveries and their answers take a few calls).
  const stages = w.dataflows.slice(1);
  const caughtUp = () => stages.every((stage) => stageLag(w, stage) === null);
  await w.clock.run(w.clock.now + 5_000, caughtUp);
  for (const stage of stages) {
    const lag = stageLag(w, stage);
    if (lag !== null) w.violations.add("settles", `${lag}, 5 s after the last monitor tick`);
  }
  await finalChecks(w);
  return { seed, violations: w.violations.list, trace: w.trace, stats: { batches: w.allBatches.size, simMs: w.clock.now, coverage: w.coverage } };
}

/** Faults have stopped: heal every replica (a wiped one stays empty) and wait until everything is healthy and caught up. */
async function settle(w: SimWorld): Promise<void> {
  w.takeovers.finish(w.clock.now);
  for (const [name, r] of w.replicas.replicas) if (r.fault) w.replicas.inject(name, "heal");
  for (const dataflow of w.dataflows) dataflow.monitor.restore(w.clock.now);
  // Give the monitor a few heartbeats to notice the last fault before judging.
  await w.clock.run(w.clock.now + 4 * HEARTBEAT_MS);
  const isSettled = () =>
    w.dataflows.every((dataflow, i) =>
      dataflow.record().moves.length === 0 &&
      dataflow.record().routes.every((r) => {
        const primary = w.replicas.status(r.primary);
        const standby = r.standby ? w.replicas.status(r.standby) : null;
        return (
          r.status === "healthy" &&
          primary !== null &&
          standby !== null &&
          standby.lsn === primary.lsn &&
          primary.appliedLsn === primary.lsn &&
          w.replicas.peek(r.primary)?.operator.closing() === false &&
          (dataflow.readers[r.partition]?.cursor ?? 0) >= primary.outputSeq &&
          (i === 0 || stageLag(w, dataflow) === null)
        );
      }),
    );
  await w.clock.run(w.clock.now + w.settleLimitMs, isSettled);
  if (!isSettled()) w.violations.add("settles", `partitions not healthy and caught up ${w.settleLimitMs} ms after faults stopped`);
}

/** Exactly once per partition, replicas equal, at most one writer per epoch, the golden run. */
async function finalChecks(w: SimWorld): Promise<void> {
  const total = w.allBatches.size;
  if (w.acked.size !== total && w.violations.length === 0) w.violations.add("settles", `only ${w.acked.size} of ${total} batches acknowledged`);
  // Batches never acknowledged may have been applied, but at most once.
  const unacked = [...w.allBatches.values()].filter((b) => !w.acked.has(`${b.producer}#${b.seq}`));
  checkWriters(w.replicas.writers, w.violations);
  const groups = keyGroupMapOf(w.record());
  // Once a key group changed owner (issue 28), a partition's records are no longer those its keys route to now: counts and the golden run are checked across partitions instead.
  const moved = groups.owners !== null;
  const recordsOf = (batches: Iterable<Batch>) => [...batches].reduce((n, b) => n + b.events.length, 0);
  const across = { counted: 0, late: 0, results: [] as { where: string; result: WindowResult }[] };
  for (const route of w.record().routes) {
    const recordsIn = (batches: Iterable<Batch>) =>
      [...batches].reduce((n, b) => n + b.events.filter((e) => partitionOfKey(groups, e.k) === route.partition).length, 0);
    const expected = moved ? null : { min: recordsIn(w.acked.values()), max: recordsIn(w.acked.values()) + recordsIn(unacked) };
    const primary = w.replicas.peek(route.primary) ? w.replicas.host(route.primary) : null;
    const standby = route.standby && w.replicas.peek(route.standby) ? w.replicas.host(route.standby) : null;
    const results = primary ? await primary.readResults(route.epoch, {}) : null;
    const counted = results?.status === "ok" ? results.results.reduce((n, r) => n + Number(r.values.n ?? r.values.packets ?? 0), 0) : -1;
    const outputs = (name: string | null) => (name ? JSON.stringify(w.replicas.replica(name).storage.outputs) : "");
    const open = (name: string | null) => JSON.stringify((name ? w.replicas.peek(name)?.operator.openResults({}) : null) ?? null);
    checkSettled(
      {
        partition: route.partition,
        primary: primary?.status() ?? null,
        standby: standby?.status() ?? null,
        counted,
        primaryOutputs: outputs(route.primary),
        standbyOutputs: outputs(route.standby),
        primaryOpen: open(route.primary),
        standbyOpen: open(route.standby),
      },
      expected,
      w.violations,
    );
    const held = w.replicas.replica(route.primary).storage.outputs;
    w.first.readers[route.partition]?.checkFinal(held);
    if (!moved) goldenRun(w, route.partition, route.primary);
    const state = w.replicas.peek(route.primary);
    across.counted += Math.max(0, counted);
    across.late += primary?.status()?.lateRecords ?? 0;
    const where = `partition ${route.partition}`;
    for (const result of [...held.map((o) => o.result), ...(state?.operator.openResults({}) ?? [])]) across.results.push({ where, result });
    for (const name of [route.primary, route.standby]) {
      const released = name ? w.replicas.peek(name)?.moves.released : undefined;
      if (released && released.length > 0) w.violations.add("settles", `${name} still holds key groups released by move ${released.map((r) => r.move).join(", ")} after every move ended`);
    }
  }
  if (w.options.workload === "moves") checkAcrossPartitions(across, { min: recordsOf(w.acked.values()), max: recordsOf(w.acked.values()) + recordsOf(unacked) }, w.violations);
  for (const stage of w.dataflows.slice(1)) {
    for (const route of stage.record().routes) {
      const held = w.replicas.replica(route.primary).storage.outputs;
      stage.readers[route.partition]?.checkFinal(held);
      // The last stage's results: what a pipeline exists for (stages before it show theirs through it).
      if (stage === w.dataflows[w.dataflows.length - 1]) w.coverage.stageResults += held.length + (w.replicas.peek(route.primary)?.operator.openResults({}).length ?? 0);
    }
    checkStage(w, stage);
  }
}

/** The primary's outputs and open results against a fresh operator fed the partition's stable log. */
function goldenRun(w: SimWorld, partition: number, primaryName: string): void {
  const state = w.replicas.peek(primaryName);
  if (!state) return;
  const { entries, missing } = w.history.log(`${w.first.id}/${partition}`, state.meta.appliedLsn);
  if (missing !== null) {
    w.violations.add("golden", `partition ${partition}: LSN ${missing} of ${state.meta.appliedLsn} was never recorded as stable`);
    return;
  }
  const outputs = w.replicas.replica(primaryName).storage.outputs.map((o) => o.result);
  const openResults = state.operator.openResults({});
  checkGolden({ spec: w.spec, groups: keyGroupMapOf(w.record()), partition, log: entries, batches: w.allBatches, acked: w.acked, outputs, openResults }, w.violations);
}
