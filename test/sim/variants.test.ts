/**
 * The simulator has teeth (issue 4): each deliberately broken variant of the protocol
 * violates an invariant within a bounded number of seeds. The count is printed.
 */
import { describe, expect, it } from "vitest";
import { runSimulation } from "./run-simulation.ts";
import { VARIANTS, type Variant } from "./variants.ts";

/** Seeds a variant may take before the simulator is considered toothless. */
const BOUND = 500;

describe("broken variants", () => {
  for (const [variant, what] of Object.entries(VARIANTS) as [Variant, string][]) {
    it(`finds a violation when ${what} (${variant})`, { timeout: 300_000 }, async () => {
      for (let seed = 1; seed <= BOUND; seed++) {
        const result = await runSimulation(seed, { variant });
        if (result.violations.length > 0) {
          console.log(`${variant}: caught after ${seed} seed(s): ${result.violations[0]}`);
          return;
        }
      }
      expect.fail(`no violation in ${BOUND} seeds for variant ${variant}`);
    });
  }
});
