/**
 * The simulator has teeth (issues 4, 10): each deliberately broken variant of the
 * protocol violates the invariants it breaks — not just any — within its bound of seeds,
 * in each of its runs (fault mode and workload). A simulator crash (`simulator`) or a
 * bare liveness timeout (`settles`) does not count as caught. The seed of each first catch is printed.
 */
import { describe, expect, it } from "vitest";
import { runSimulation } from "./run-simulation.ts";
import { VARIANTS, type Variant, type VariantRun } from "./variants.ts";
import { formatViolation, INVARIANTS, type Invariant } from "./violations.ts";

/** Variant runs start at this seed, away from the seeds the normal suites use first. */
const FIRST_SEED = 100_001;
/** A broken variant often never settles: 5 simulated seconds tell as much as 30 and cost a sixth. */
const SETTLE_LIMIT_MS = 5_000;

describe("broken variants", () => {
  for (const variant of Object.keys(VARIANTS) as Variant[]) {
    const { what, runs } = VARIANTS[variant];
    const breaks: readonly Invariant[] = VARIANTS[variant].breaks;
    for (const run of runs as readonly VariantRun[]) {
      const mode = `${run.bothDown ? "both down" : "one down"}, ${run.workload ?? "window"}`;
      it(`${variant} (${what}) trips ${breaks.join(" and ")} within ${run.bound} seeds (${mode})`, { timeout: 300_000 }, async () => {
        const missing = new Set(breaks);
        const other: string[] = [];
        for (let seed = FIRST_SEED; seed < FIRST_SEED + run.bound && missing.size > 0; seed++) {
          const result = await runSimulation(seed, { variant, bothDown: run.bothDown === true, workload: run.workload ?? "window", settleLimitMs: SETTLE_LIMIT_MS });
          for (const v of result.violations) {
            if (missing.delete(v.invariant)) console.log(`${variant} (${mode}): ${v.invariant} tripped at seed ${seed - FIRST_SEED + 1} of ${run.bound}: ${v.detail.split("\n")[0]}`);
            else if (!breaks.includes(v.invariant) && other.length < 5) other.push(`seed ${seed}: ${formatViolation(v).split("\n")[0]}`);
          }
        }
        expect([...missing], `never tripped in ${run.bound} seeds; other violations: ${other.join("; ") || "none"}`).toEqual([]);
      });
    }
  }

  it("every invariant but the liveness check and the simulator's own is some variant's to break", () => {
    const broken = new Set(Object.values(VARIANTS).flatMap((v): readonly Invariant[] => v.breaks));
    expect((Object.keys(INVARIANTS) as Invariant[]).filter((i) => !broken.has(i))).toEqual(["settles", "simulator"]);
  });
});
