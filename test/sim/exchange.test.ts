/**
 * The exchange between two stages in the simulator model (issue 27, `exchange-sim.ts`):
 * 2,000 seeds with faults on both stages hold every invariant, each seed's fault coverage
 * is summed and enforced, and each broken variant is caught within its bound of seeds
 * (about 5× the seeds it took when measured). Failures print their seeds.
 */
import { describe, expect, it } from "vitest";
import { runExchange } from "./exchange-run.ts";
import { EXCHANGE_VARIANTS, type ExchangeResult, type ExchangeVariant } from "./exchange-sim.ts";

const SEEDS = 2_000;
/** Variant runs start here, away from the seeds the suite uses. */
const FIRST_VARIANT_SEED = 100_001;
/** About 5× the seeds each took when added (6, 3 and 1 from the first variant seed). */
const VARIANT_BOUNDS: Record<ExchangeVariant, number> = { "trim-before-ack": 30, "keep-redelivered": 15, "close-on-max-watermark": 5 };

describe("exchange between stages (simulator model)", () => {
  it(`delivers exactly once and closes downstream windows exactly for seeds 1..${SEEDS}`, { timeout: 120_000 }, () => {
    const failures: string[] = [];
    const total: ExchangeResult["stats"] = { outputs: 0, deliveries: 0, refusals: 0, upCrashes: 0, upCrashesMidDelivery: 0, downCrashes: 0, downCrashesUnreplicated: 0 };
    for (let seed = 1; seed <= SEEDS && failures.length < 5; seed++) {
      const result = runExchange(seed);
      for (const key of Object.keys(total) as (keyof typeof total)[]) total[key] += result.stats[key];
      if (result.problems.length > 0) failures.push(`seed ${seed}: ${result.problems.slice(0, 3).join("; ")}`);
    }
    console.log(`exchange seeds 1..${SEEDS}: ${JSON.stringify(total)}`);
    expect(failures, "replay one with runExchange(seed) from test/sim/exchange-run.ts").toEqual([]);
    for (const [kind, count] of Object.entries(total)) expect(count, `${kind} over ${SEEDS} seeds`).toBeGreaterThan(SEEDS / 4);
  });

  for (const variant of Object.keys(EXCHANGE_VARIANTS) as ExchangeVariant[]) {
    const bound = VARIANT_BOUNDS[variant];
    it(`catches ${variant} (${EXCHANGE_VARIANTS[variant]}) within ${bound} seeds`, () => {
      let caught: { seed: number; problem: string } | null = null;
      for (let seed = FIRST_VARIANT_SEED; seed < FIRST_VARIANT_SEED + bound && caught === null; seed++) {
        const problem = runExchange(seed, variant).problems[0];
        if (problem !== undefined) caught = { seed, problem };
      }
      if (caught) console.log(`${variant}: caught at seed ${caught.seed - FIRST_VARIANT_SEED + 1} of ${bound}: ${caught.problem}`);
      expect(caught, `${variant} never caught in ${bound} seeds`).not.toBeNull();
    });
  }
});
