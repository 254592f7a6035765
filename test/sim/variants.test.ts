/**
 * The simulator has teeth (issues 4, 10): each deliberately broken variant of the
 * protocol violates the invariant it breaks — not just any — within its bound of seeds,
 * in each of its runs (fault mode and workload). A simulator crash, an exception or a bare
 * liveness timeout does not count as caught. The seed of the first catch is printed.
 */
import { describe, expect, it } from "vitest";
import { runSimulation } from "./run-simulation.ts";
import { VARIANTS, type Variant, type VariantRun } from "./variants.ts";
import { formatViolation } from "./violations.ts";

/** Variant runs start at this seed, away from the seeds the normal suites use first. */
const FIRST_SEED = 100_001;

describe("broken variants", () => {
  for (const variant of Object.keys(VARIANTS) as Variant[]) {
    const { what, breaks, runs } = VARIANTS[variant];
    for (const run of runs as readonly VariantRun[]) {
      const mode = `${run.bothDown ? "both down" : "one down"}, ${run.workload ?? "window"}`;
      it(`${variant} (${what}) trips ${breaks} within ${run.bound} seeds (${mode})`, { timeout: 300_000 }, async () => {
        const tripped: string[] = [];
        for (let seed = FIRST_SEED; seed < FIRST_SEED + run.bound; seed++) {
          const result = await runSimulation(seed, { variant, bothDown: run.bothDown === true, workload: run.workload ?? "window" });
          const hit = result.violations.find((v) => v.invariant === breaks);
          if (hit) {
            console.log(`${variant} (${mode}): ${breaks} tripped after ${seed - FIRST_SEED + 1} seed(s): ${hit.detail.split("\n")[0]}`);
            return;
          }
          for (const v of result.violations.slice(0, 1)) tripped.push(`seed ${seed}: ${formatViolation(v).split("\n")[0]}`);
        }
        expect.fail(`${breaks} never tripped in ${run.bound} seeds for ${variant} (${mode}); other violations: ${tripped.slice(0, 5).join("; ") || "none"}`);
      });
    }
  }
});
