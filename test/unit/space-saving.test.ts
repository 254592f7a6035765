/** Space-Saving top-k against an exact reference: the error guarantees, ordering, determinism and checkpoints. */
import { describe, expect, it } from "vitest";
import { rng } from "../helpers/rng.ts";
import { isTopKState, topKAdd, topKCreate, topKTop, type TopKState } from "../../shared/operators/sketches/space-saving.ts";

type Weighted = [item: string, weight: number];

/** `length` items drawn Zipf-like (P(i) ∝ 1/(i+1)^skew over `universe` items) with integer weights 1..maxWeight. */
function zipfStream(seed: number, length: number, universe: number, skew: number, maxWeight: number): Weighted[] {
  const r = rng(seed);
  const cumulative: number[] = [];
  let sum = 0;
  for (let i = 0; i < universe; i++) cumulative.push((sum += 1 / (i + 1) ** skew));
  return Array.from({ length }, (): Weighted => {
    const u = r.next() * sum;
    let lo = 0;
    let hi = universe - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((cumulative[mid] ?? 0) <= u) lo = mid + 1;
      else hi = mid;
    }
    return [`item-${lo}`, 1 + r.int(maxWeight)];
  });
}

function summarise(capacity: number, stream: readonly Weighted[]): TopKState {
  const state = topKCreate(capacity);
  for (const [item, weight] of stream) topKAdd(state, item, weight);
  return state;
}

function exactWeights(stream: readonly Weighted[]): Map<string, number> {
  const weights = new Map<string, number>();
  for (const [item, weight] of stream) weights.set(item, (weights.get(item) ?? 0) + weight);
  return weights;
}

describe("topKAdd against an exact reference", () => {
  it.each([
    [1, 1, 2000, 1.1],
    [2, 10, 5000, 1.1],
    [3, 50, 20000, 1.0],
    [4, 200, 20000, 0.8],
    [5, 1, 500, 1.5],
  ])("keeps the Space-Saving guarantees (seed %i, capacity %i, %i records, skew %f)", (seed, capacity, length, skew) => {
    const stream = zipfStream(seed, length, 5000, skew, 10);
    const state = summarise(capacity, stream);
    const exact = exactWeights(stream);
    const total = stream.reduce((sum, [, weight]) => sum + weight, 0);
    expect(state.total).toBe(total);
    expect(state.items).toHaveLength(Math.min(capacity, exact.size));
    // Integer weights keep the sums exact: counts add up to the total weight.
    expect(state.items.reduce((sum, [, count]) => sum + count, 0)).toBe(total);
    const reported = topKTop(state, capacity);
    for (const { value, count, error } of reported) {
      const truth = exact.get(value) ?? 0;
      expect(count - error, value).toBeLessThanOrEqual(truth);
      expect(truth, value).toBeLessThanOrEqual(count);
      expect(error, value).toBeLessThanOrEqual(total / capacity);
    }
    const monitored = new Set(reported.map((r) => r.value));
    const heavy = [...exact].filter(([, weight]) => weight > total / capacity).map(([item]) => item);
    // Capacity 1 has no heavy hitters (none outweighs the total); the others must have some.
    expect(heavy.length > 0).toBe(capacity > 1);
    expect(heavy.filter((item) => !monitored.has(item))).toEqual([]);
  });

  it("is exact while at most `capacity` distinct items have been seen", () => {
    const stream = zipfStream(6, 3000, 40, 1.0, 100);
    const exact = exactWeights(stream);
    expect(exact.size).toBe(40);
    const state = summarise(40, stream);
    const expected = [...exact]
      .map(([value, count]) => ({ value, count, error: 0 }))
      .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : 1));
    expect(topKTop(state, 40)).toEqual(expected);
    expect(topKTop(state, 5)).toEqual(expected.slice(0, 5));
  });

  it("defaults the weight to 1", () => {
    const state = topKCreate(4);
    for (const item of ["a", "b", "a", "a"]) topKAdd(state, item);
    expect(topKTop(state, 4)).toEqual([
      { value: "a", count: 3, error: 0 },
      { value: "b", count: 1, error: 0 },
    ]);
    expect(state.total).toBe(4);
  });

  it("treats a weight that is not a finite number above 0 as a no-op", () => {
    const state = summarise(2, [
      ["a", 2],
      ["b", 1],
    ]);
    const before = JSON.stringify(state);
    for (const weight of [0, -0, -1, -1e15, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      topKAdd(state, "a", weight);
      topKAdd(state, "c", weight);
    }
    expect(JSON.stringify(state)).toBe(before);
  });
});

describe("Space-Saving ordering", () => {
  it("lists equal counts by value ascending", () => {
    const state = summarise(5, [
      ["pear", 2],
      ["fig", 5],
      ["apple", 2],
      ["kiwi", 2],
      ["date", 5],
    ]);
    expect(topKTop(state, 5).map((r) => [r.value, r.count])).toEqual([
      ["date", 5],
      ["fig", 5],
      ["apple", 2],
      ["kiwi", 2],
      ["pear", 2],
    ]);
  });

  it("evicts the smallest value among the items with the minimum count", () => {
    const state = summarise(3, [
      ["b", 1],
      ["c", 1],
      ["a", 1],
      ["z", 4],
    ]);
    expect(topKTop(state, 3)).toEqual([
      { value: "z", count: 5, error: 1 },
      { value: "b", count: 1, error: 0 },
      { value: "c", count: 1, error: 0 },
    ]);
    topKAdd(state, "y", 1);
    expect(topKTop(state, 3).map((r) => r.value)).toEqual(["z", "y", "c"]);
  });

  it("returns nothing for k ≤ 0 and everything monitored for a large k", () => {
    const state = summarise(3, [
      ["a", 1],
      ["b", 2],
    ]);
    expect(topKTop(state, 0)).toEqual([]);
    expect(topKTop(state, -1)).toEqual([]);
    expect(topKTop(state, 10).map((r) => r.value)).toEqual(["b", "a"]);
  });

  it("treats prototype member names and `$` prefixes as ordinary items", () => {
    const names = ["__proto__", "constructor", "toString", "hasOwnProperty", "", "$", "$a", "a"];
    const stream = names.map((name, i): Weighted => [name, i + 1]);
    const state = summarise(names.length, [...stream, ...stream]);
    const restored: unknown = JSON.parse(JSON.stringify(state));
    expect(isTopKState(restored)).toBe(true);
    for (const s of [state, restored as TopKState]) {
      expect(topKTop(s, names.length).map((r) => [r.value, r.count, r.error])).toEqual(
        names.map((name, i) => [name, 2 * (i + 1), 0]).reverse(),
      );
    }
    expect(Object.getPrototypeOf(state.at)).toBe(Object.prototype);
  });
});

describe("Space-Saving determinism and checkpoints", () => {
  it("produces byte-identical state from the same input", () => {
    const stream = zipfStream(7, 5000, 2000, 1.0, 5);
    expect(JSON.stringify(summarise(30, stream))).toBe(JSON.stringify(summarise(30, stream)));
  });

  it("continues after a JSON round trip exactly as without it", () => {
    const stream = zipfStream(8, 6000, 2000, 1.0, 5);
    for (const cut of [0, 1, 2500, 6000]) {
      const restored: unknown = JSON.parse(JSON.stringify(summarise(25, stream.slice(0, cut))));
      if (!isTopKState(restored)) throw new Error(`checkpoint at ${cut} failed its check`);
      for (const [item, weight] of stream.slice(cut)) topKAdd(restored, item, weight);
      expect(JSON.stringify(restored), `cut at ${cut}`).toBe(JSON.stringify(summarise(25, stream)));
    }
  });

  it("accepts the states it produces", () => {
    expect(isTopKState(topKCreate(1))).toBe(true);
    expect(isTopKState(summarise(10, zipfStream(9, 500, 100, 1.0, 3)))).toBe(true);
  });

  it("rejects malformed states", () => {
    const valid = summarise(3, [
      ["a", 1],
      ["b", 2],
      ["c", 3],
    ]);
    const copy = (): TopKState => JSON.parse(JSON.stringify(valid)) as TopKState;
    const malformed: unknown[] = [
      null,
      [],
      "top",
      {},
      { ...copy(), cap: 0 },
      { ...copy(), cap: 2 },
      { ...copy(), cap: 2.5 },
      { ...copy(), total: -1 },
      { ...copy(), total: "6" },
      { ...copy(), items: {} },
      { ...copy(), at: [] },
      { ...copy(), at: { ...copy().at, $d: 3 } },
      { ...copy(), at: { $a: 1, $b: 0, $c: 2 } },
      { ...copy(), items: [...copy().items].reverse(), at: { $c: 0, $b: 1, $a: 2 } },
      { ...copy(), items: [["a", 1, 0], ["b", 2, 0], ["c", 3]] },
      { ...copy(), items: [["a", 1, 0], ["b", 2, 3], ["c", 3, 0]] },
      { ...copy(), items: [["a", 1, -1], ["b", 2, 0], ["c", 3, 0]] },
      { ...copy(), items: [["a", 0, 0], ["b", 2, 0], ["c", 3, 0]] },
      { ...copy(), items: [[1, 1, 0], ["b", 2, 0], ["c", 3, 0]], at: { $1: 0, $b: 1, $c: 2 } },
    ];
    expect(isTopKState(copy())).toBe(true);
    for (const value of malformed) expect(isTopKState(value), JSON.stringify(value)).toBe(false);
  });

  it("rejects a capacity that is not a positive integer", () => {
    for (const capacity of [0, -1, 1.5, Number.NaN]) expect(() => topKCreate(capacity)).toThrow(RangeError);
  });
});
