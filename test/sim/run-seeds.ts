/** Runs a range of seeds and reports the first failures with the command that replays each, and the fault coverage. */
import { addCoverage, emptyCoverage, type CoverageSummary } from "./coverage.ts";
import { runSimulation } from "./run-simulation.ts";
import type { SimOptions } from "./sim-world.ts";
import { formatViolation, type Violation } from "./violations.ts";

export interface SeedReport {
  runs: number;
  failures: { seed: number; violations: Violation[]; replay: string }[];
  coverage: CoverageSummary;
}

/** The one-line command that replays a seed with a readable trace. */
function replayCommand(seed: number, options: SimOptions): string {
  const flags = [`--seed ${seed}`, "--trace"];
  if (options.bothDown) flags.push("--both-down");
  if (options.variant) flags.push(`--variant ${options.variant}`);
  if (options.workload && options.workload !== "window") flags.push(`--workload ${options.workload}`);
  return `npm run sim -- ${flags.join(" ")}`;
}

/** Runs seeds `from`..`from + count - 1`; stops after `maxFailures` failures. */
export async function runSeeds(from: number, count: number, options: SimOptions = {}, maxFailures = 5): Promise<SeedReport> {
  const report: SeedReport = { runs: 0, failures: [], coverage: emptyCoverage() };
  for (let seed = from; seed < from + count && report.failures.length < maxFailures; seed++) {
    const result = await runSimulation(seed, options);
    report.runs += 1;
    addCoverage(report.coverage, result.stats.coverage);
    if (result.violations.length > 0) report.failures.push({ seed, violations: result.violations, replay: replayCommand(seed, options) });
  }
  return report;
}

/** A failure report a person can act on: the seed, what broke, and how to replay it. */
export function describeFailures(report: Pick<SeedReport, "failures">): string {
  return report.failures
    .map((f) => `seed ${f.seed}:\n  ${f.violations.slice(0, 5).map(formatViolation).join("\n  ")}\n  replay: ${f.replay}`)
    .join("\n");
}
