/**
 * `npm run sim -- --seeds N [--from S] [--both-down] [--variant V] [--workload W]` runs the simulator
 * over N seeds; `npm run sim -- --seed S --trace [...]` replays one seed with its trace.
 * Exits non-zero when any seed violates an invariant.
 */
import { coverageProblems, emptyCoverage, formatCoverage, mergeCoverage } from "./coverage.ts";
import { describeFailures, runSeeds } from "./run-seeds.ts";
import { runSimulation } from "./run-simulation.ts";
import { isVariant, VARIANTS } from "./variants.ts";
import { formatViolation } from "./violations.ts";
import { WORKLOADS, type Workload } from "./sim-dataflows.ts";

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
  const { batches, simMs, coverage } = result.stats;
  process.stdout.write(`seed ${seed}: ${batches} batches, ${coverage.replicaFaults} replica faults (${JSON.stringify(coverage.kinds)}), ${simMs} simulated ms\n`);
  process.stdout.write(result.violations.length === 0 ? "no violations\n" : `violations:\n  ${result.violations.map(formatViolation).join("\n  ")}\n`);
  process.exitCode = result.violations.length === 0 ? 0 : 1;
} else {
  const count = value("--seeds", 1000);
  const from = value("--from", 1);
  const started = performance.now();
  let runs = 0;
  const failures = [];
  const coverage = emptyCoverage();
  for (let at = from; at < from + count && failures.length < 5; at += 500) {
    const report = await runSeeds(at, Math.min(500, from + count - at), options, 5 - failures.length);
    runs += report.runs;
    failures.push(...report.failures);
    mergeCoverage(coverage, report.coverage);
    process.stdout.write(`\r${runs}/${count} seeds, ${failures.length} failing`);
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stdout.write(`\n${runs} seeds from ${from} in ${seconds} s${options.variant ? ` (variant ${options.variant})` : ""}\n`);
  process.stdout.write(`${formatCoverage("coverage", coverage)}\n`);
  for (const problem of coverageProblems(coverage, options.bothDown, workload)) process.stdout.write(`coverage too low: ${problem}\n`);
  if (failures.length > 0) process.stdout.write(`${describeFailures({ failures })}\n`);
  process.exitCode = failures.length === 0 ? 0 : 1;
}
