/** Runs a range of seeds and reports the first failures with the command that replays each. */
import { runSimulation } from "./run-simulation.ts";
import type { SimOptions } from "./sim-world.ts";

export interface SeedReport {
  runs: number;
  failures: { seed: number; violations: string[]; replay: string }[];
}

/** The one-line command that replays a seed with a readable trace. */
function replayCommand(seed: number, options: SimOptions): string {
  const flags = [`--seed ${seed}`, "--trace"];
  if (options.bothDown) flags.push("--both-down");
  if (options.variant) flags.push(`--variant ${options.variant}`);
  return `npm run sim -- ${flags.join(" ")}`;
}

/** Runs seeds `from`..`from + count - 1`; stops after `maxFailures` failures. */
export async function runSeeds(from: number, count: number, options: SimOptions = {}, maxFailures = 5): Promise<SeedReport> {
  const report: SeedReport = { runs: 0, failures: [] };
  for (let seed = from; seed < from + count && report.failures.length < maxFailures; seed++) {
    const result = await runSimulation(seed, options);
    report.runs += 1;
    if (result.violations.length > 0) report.failures.push({ seed, violations: result.violations, replay: replayCommand(seed, options) });
  }
  return report;
}

/** A failure report a person can act on: the seed, what broke, and how to replay it. */
export function describeFailures(report: SeedReport): string {
  return report.failures
    .map((f) => `seed ${f.seed}:\n  ${f.violations.slice(0, 5).join("\n  ")}\n  replay: ${f.replay}`)
    .join("\n");
}
