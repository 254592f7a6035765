/**
 * `npm run sim -- --seeds N [--from S] [--both-down] [--variant V] [--workload W]` runs the simulator
 * over N seeds; `npm run sim -- --seed S --trace [...]` replays one seed with its trace.
 * Exits non-zero when any seed violates an invariant.
 */
import { describeFailures, runSeeds } from "./run-seeds.ts";
import { runSimulation } from "./run-simulation.ts";
import { isVariant, VARIANTS } from "./variants.ts";
import { WORKLOADS, type Workload } from "./sim-world.ts";

function isWorkload(name: string): name is Workload {
  return (WORKLOADS as readonly string[]).includes(name);
}

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(name);
const value = (name: string, fallback: number) => {
  const at = args.indexOf(name);
  const parsed = at >= 0 ? Number(args[at + 1]) : fallback;
  if (!Number.isSafeInteger(parsed) || parsed < 0) throw new Error(`${name} needs a non-negative integer`);
  return parsed;
};
const variantName = args.includes("--variant") ? args[args.indexOf("--variant") + 1] ?? "" : null;
if (variantName !== null && !isVariant(variantName)) {
  throw new Error(`unknown variant '${variantName}'; one of: ${Object.keys(VARIANTS).join(", ")}`);
}
const workload = args.includes("--workload") ? args[args.indexOf("--workload") + 1] ?? "" : "window";
if (!isWorkload(workload)) throw new Error(`unknown workload '${workload}'; one of: ${WORKLOADS.join(", ")}`);
const options = { bothDown: flag("--both-down"), variant: variantName, workload };

if (args.includes("--seed")) {
  const seed = value("--seed", 1);
  const result = await runSimulation(seed, { ...options, trace: flag("--trace") });
  if (flag("--trace")) process.stdout.write(`${result.trace.join("\n")}\n`);
  process.stdout.write(`seed ${seed}: ${result.stats.batches} batches, ${result.stats.faults} faults, ${result.stats.simMs} simulated ms\n`);
  process.stdout.write(result.violations.length === 0 ? "no violations\n" : `violations:\n  ${result.violations.join("\n  ")}\n`);
  process.exitCode = result.violations.length === 0 ? 0 : 1;
} else {
  const count = value("--seeds", 1000);
  const from = value("--from", 1);
  const started = performance.now();
  let runs = 0;
  const failures = [];
  for (let at = from; at < from + count && failures.length < 5; at += 500) {
    const report = await runSeeds(at, Math.min(500, from + count - at), options, 5 - failures.length);
    runs += report.runs;
    failures.push(...report.failures);
    process.stdout.write(`\r${runs}/${count} seeds, ${failures.length} failing`);
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stdout.write(`\n${runs} seeds from ${from} in ${seconds} s${options.variant ? ` (variant ${options.variant})` : ""}\n`);
  if (failures.length > 0) process.stdout.write(`${describeFailures({ runs, failures })}\n`);
  process.exitCode = failures.length === 0 ? 0 : 1;
}
