/** HyperLogLog: accuracy against known cardinalities, set semantics (order, duplicates) and checkpoints. */
import { describe, expect, it } from "vitest";
import { rng } from "../helpers/rng.ts";
import { HLL_PRECISION, hllAdd, hllCreate, hllEstimate, isHllState, type HllState } from "../../shared/operators/sketches/hyperloglog.ts";

/** Standard error at the default precision: 1.04/√4096 ≈ 1.6 %. */
const STANDARD_ERROR = 1.04 / Math.sqrt(2 ** HLL_PRECISION);

/** `n` distinct values: a random part from the seed, made unique by the index. */
function distinctValues(seed: number, n: number): string[] {
  const r = rng(seed);
  return Array.from({ length: n }, (_, i) => `${r.int(2 ** 30).toString(36)}-${i}`);
}

function sketchOf(values: readonly string[], p?: number): HllState {
  const state = hllCreate(p);
  for (const value of values) hllAdd(state, value);
  return state;
}

function relativeError(values: readonly string[], p?: number): number {
  return (hllEstimate(sketchOf(values, p)) - values.length) / values.length;
}

/** A copy as a checkpoint would restore it. */
function roundTrip(state: HllState): unknown {
  return JSON.parse(JSON.stringify(state));
}

describe("hllEstimate", () => {
  it("is 0 for an empty sketch", () => {
    expect(hllEstimate(hllCreate())).toBe(0);
  });

  it.each([1, 2, 3])("counts up to m/16 = 256 distinct values exactly (seed %i)", (seed) => {
    const state = hllCreate();
    distinctValues(seed, 256).forEach((value, i) => {
      hllAdd(state, value);
      expect(hllEstimate(state), `after ${i + 1} values`).toBe(i + 1);
    });
  });

  it.each([1e3, 1e4, 1e5])("estimates %i distinct values within 3 standard errors", (n) => {
    expect(Math.abs(relativeError(distinctValues(n, n)))).toBeLessThan(3 * STANDARD_ERROR);
  });

  it("has a root-mean-square error near 1.04/√m over 20 trials at n = 10^4", () => {
    // 10^4 ≈ 2.4m sits where the classic estimator switches from linear counting and is
    // biased; the bound would fail there.
    const errors = Array.from({ length: 20 }, (_, trial) => relativeError(distinctValues(100 + trial, 1e4)));
    const rms = Math.sqrt(errors.reduce((sum, e) => sum + e * e, 0) / errors.length);
    const bias = errors.reduce((sum, e) => sum + e, 0) / errors.length;
    expect(rms).toBeLessThan(0.025);
    expect(Math.abs(bias)).toBeLessThan(STANDARD_ERROR);
    expect(Math.max(...errors.map(Math.abs))).toBeLessThan(3 * STANDARD_ERROR);
  });

  it.each([8, 14, 16])("honours precision %i: 2^p registers and an error within 3 standard errors", (p) => {
    const values = distinctValues(p, 2e4);
    const state = sketchOf(values, p);
    expect(state.r).toHaveLength(2 ** p);
    const error = (hllEstimate(state) - values.length) / values.length;
    expect(Math.abs(error)).toBeLessThan((3 * 1.04) / Math.sqrt(2 ** p));
  });
});

describe("HyperLogLog as a set sketch", () => {
  it.each([50, 300, 5000])("ignores duplicates (n = %i)", (n) => {
    const values = distinctValues(n, n);
    const state = sketchOf(values);
    const before = JSON.stringify(state);
    for (const value of rng(n).shuffle(values)) hllAdd(state, value);
    expect(JSON.stringify(state)).toBe(before);
    expect(hllEstimate(state)).toBe(hllEstimate(JSON.parse(before) as HllState));
  });

  it.each([50, 300, 5000])("depends only on the set, not on the order (n = %i)", (n) => {
    const values = distinctValues(n, n);
    const multiset = [...values, ...values.slice(0, n / 2)];
    const shuffled = rng(n + 1).shuffle(multiset);
    expect(JSON.stringify(sketchOf(shuffled))).toBe(JSON.stringify(sketchOf(multiset)));
  });

  // Sizes cover sparse+sparse staying sparse, sparse+sparse going dense, and each
  // mix of sparse and dense.
  it("keeps the higher rank when two values share a 25-bit sparse slot, in either order", () => {
    // Found by search: both land in slot 738745, with ranks 1 and 2.
    const forward = sketchOf(["c7434", "c15916"]);
    expect(forward.r).toEqual([738745 * 64 + 2]);
    expect(sketchOf(["c15916", "c7434"])).toEqual(forward);
    expect(hllEstimate(forward)).toBe(1);
  });
});

describe("HyperLogLog checkpoints", () => {
  it("hashes exactly as in earlier releases, so sketches in old checkpoints keep growing consistently", () => {
    // Expected entries come from a separate byte-wise MurmurHash3_x86_32 of the UTF-16LE
    // bytes (seeds 0x9747b28c and 0x5bd1e995); v522 and v715 have ranks that reach the
    // second hash.
    const golden: Array<[string, number]> = [
      ["", 1977311490],
      ["a", 1431611521],
      ["hello", 1081920066],
      ["__proto__", 1153550017],
      ["😀", 1853902854],
      ["v522", 1205808909],
      ["v715", 1773998666],
    ];
    for (const [value, entry] of golden) expect(sketchOf([value]).r, value).toEqual([entry]);
  });

  it.each([0, 100, 20000])("round-trips through JSON and continues identically (n = %i)", (n) => {
    const values = distinctValues(n + 3, n);
    const state = sketchOf(values);
    const restored = roundTrip(state);
    expect(isHllState(restored)).toBe(true);
    expect(restored).toEqual(state);
    if (!isHllState(restored)) return;
    expect(hllEstimate(restored)).toBe(hllEstimate(state));
    const more = distinctValues(n + 4, 500);
    for (const value of more) {
      hllAdd(restored, value);
      hllAdd(state, value);
    }
    expect(JSON.stringify(restored)).toBe(JSON.stringify(state));
  });

  it("accepts the states it produces, sparse and dense", () => {
    expect(isHllState(hllCreate())).toBe(true);
    expect(isHllState(sketchOf(distinctValues(1, 100)))).toBe(true);
    expect(isHllState(sketchOf(distinctValues(1, 1e4), 4))).toBe(true);
    expect(isHllState(sketchOf(distinctValues(1, 1e4), 16))).toBe(true);
  });

  it("rejects malformed states", () => {
    const dense = sketchOf(distinctValues(5, 1e4));
    const sparse = sketchOf(distinctValues(5, 10));
    const entries = sparse.r as number[];
    const malformed: unknown[] = [
      null,
      "state",
      [],
      {},
      { p: 12 },
      { r: dense.r },
      { p: "12", r: dense.r },
      { p: 12.5, r: [] },
      { p: 3, r: [] },
      { p: 17, r: [] },
      { p: 12, r: (dense.r as string).slice(1) },
      { p: 12, r: `/${(dense.r as string).slice(1)}` },
      { p: 12, r: `n${(dense.r as string).slice(1)}` },
      { p: 12, r: [...entries].reverse() },
      { p: 12, r: [entries[0], ...entries] },
      { p: 12, r: [((entries[0] ?? 0) >>> 6) * 64] },
      { p: 12, r: [0.5] },
      { p: 12, r: ["1"] },
      { p: 12, r: [2 ** 31] },
      { p: 12, r: Array.from({ length: 257 }, (_, i) => i * 64 + 1) },
    ];
    for (const value of malformed) expect(isHllState(value), JSON.stringify(value)?.slice(0, 60)).toBe(false);
  });

  it("rejects precisions outside [4, 16]", () => {
    for (const p of [3, 17, 12.5, Number.NaN]) expect(() => hllCreate(p)).toThrow(RangeError);
  });
});
