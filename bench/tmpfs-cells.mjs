// The P=4, 100-event cells again with the objects' state on tmpfs (issue 12). Local workerd's
// SQLite calls fsync at every commit, which this machine's disk makes dear and the platform
// does not pay in that form; the report sets these rounds beside the on-disk ones, so that
// what the disk adds to each design is told apart from the CPU the design spends.
import { mkdtempSync } from "node:fs";
import { counterSelfCost } from "./costs.mjs";
import { readCounters, removeDir, startFlux, startPlain } from "./harness.mjs";
import { inRounds, matrixCell, matrixPlan, medianRounds } from "./matrix.mjs";

/**
 * Runs Flux R=1, R=2 and both baselines at P=4 (100-event batches) in `rounds` rounds, each design in a
 * fresh workerd whose state is under /dev/shm.
 * @returns every round and each design's median round, or null when there is no /dev/shm.
 */
export async function tmpfsCells(scriptPath, plainPath, simplePath, durationMs, rounds, log) {
  const dirs = [];
  try {
    for (const prefix of ["flux-bench-tmpfs-", "flux-bench-tmpfs-plain-", "flux-bench-tmpfs-simple-"]) dirs.push(mkdtempSync(`/dev/shm/${prefix}`));
  } catch {
    dirs.forEach(removeDir);
    log("  no /dev/shm: the cells on tmpfs are not measured");
    return null;
  }
  const instances = { flux: null, plain: null, simple: null, before: null };
  try {
    instances.flux = await startFlux(scriptPath, dirs[0]);
    instances.plain = await startPlain(plainPath, dirs[1]);
    instances.simple = await startPlain(simplePath, dirs[2]);
    const self = {};
    for (const [name, instance] of Object.entries(instances)) self[name] = instance ? await counterSelfCost(() => readCounters(instance.url)) : 0;
    const cells = matrixPlan(false, durationMs, false).filter((c) => c.batchSize === 100 && c.partitions === 4);
    const all = [];
    for (const cell of inRounds(cells, rounds)) {
      const r = await matrixCell(instances, self, cell);
      all.push(r);
      log(`  tmpfs: ${r.label} P=4: ${Math.round(r.eventsPerSecond)} events/s, ${r.cpuMicrosPerEvent.toFixed(1)} µs CPU/event`);
    }
    return { rounds: all, matrix: medianRounds(all) };
  } finally {
    await instances.flux?.stop();
    await instances.plain?.stop();
    await instances.simple?.stop();
    dirs.forEach(removeDir);
  }
}
