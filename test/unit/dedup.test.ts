/** Exact, bounded dedup per producer (shared/dedup.ts), including out-of-order seqs and a growing window. */
import { describe, expect, it } from "vitest";
import { rng } from "../helpers/rng.ts";
import { judgeSeq, recordSeq } from "../../shared/dedup.ts";
import type { DedupState } from "../../shared/wire/persisted.ts";

const mulberry32 = (seed: number): (() => number) => rng(seed).next;

function shuffle<T>(items: T[], rng: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

/** Judges then records, as a replica does; returns the verdict. */
function apply(state: DedupState, producer: string, seq: number, window: number) {
  const verdict = judgeSeq(state, producer, seq, window);
  if (verdict === "new") recordSeq(state, producer, seq, window);
  return verdict;
}

describe("judgeSeq and recordSeq", () => {
  it("judges any seq of an unknown producer as new", () => {
    const state: DedupState = {};
    for (const seq of [1, 2, 1000, Number.MAX_SAFE_INTEGER]) expect(judgeSeq(state, "p", seq, 16)).toBe("new");
    expect(state).toEqual({});
  });

  it("is exact within the window: recorded seqs are duplicates, skipped ones are new", () => {
    const state: DedupState = {};
    const skipped = new Set([3, 10, 11, 40, 63]);
    for (let seq = 1; seq <= 64; seq++) if (!skipped.has(seq)) recordSeq(state, "p", seq, 64);
    for (let seq = 1; seq <= 64; seq++) {
      expect(judgeSeq(state, "p", seq, 64), `seq ${seq}`).toBe(skipped.has(seq) ? "new" : "duplicate");
    }
    expect(judgeSeq(state, "p", 65, 64)).toBe("new");
  });

  it("accepts out-of-order concurrent seqs each exactly once", () => {
    for (let seed = 1; seed <= 20; seed++) {
      const rng = mulberry32(seed);
      const state: DedupState = {};
      const order = shuffle(Array.from({ length: 50 }, (_, i) => i + 1), rng);
      for (const seq of order) {
        expect(judgeSeq(state, "p", seq, 64), `seed ${seed} seq ${seq} before`).toBe("new");
        recordSeq(state, "p", seq, 64);
        expect(judgeSeq(state, "p", seq, 64), `seed ${seed} seq ${seq} after`).toBe("duplicate");
      }
      for (let seq = 1; seq <= 50; seq++) expect(judgeSeq(state, "p", seq, 64), `seed ${seed} seq ${seq}`).toBe("duplicate");
      expect(state["$p"]?.applied, `seed ${seed}`).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    }
  });

  it("judges seqs at and below high - window as too-old, and the one above as recognisable", () => {
    const state: DedupState = {};
    recordSeq(state, "p", 100, 16);
    expect(judgeSeq(state, "p", 84, 16)).toBe("too-old");
    expect(judgeSeq(state, "p", 83, 16)).toBe("too-old");
    expect(judgeSeq(state, "p", 1, 16)).toBe("too-old");
    expect(judgeSeq(state, "p", 85, 16)).toBe("new");
    recordSeq(state, "p", 85, 16);
    expect(judgeSeq(state, "p", 85, 16)).toBe("duplicate");
    recordSeq(state, "p", 101, 16);
    expect(judgeSeq(state, "p", 85, 16)).toBe("too-old");
    expect(judgeSeq(state, "p", 100, 16)).toBe("duplicate");
  });

  it("ignores recording a too-old seq or recording a seq twice", () => {
    const state: DedupState = {};
    recordSeq(state, "p", 50, 16);
    recordSeq(state, "p", 40, 16);
    const before = structuredClone(state);
    recordSeq(state, "p", 34, 16);
    recordSeq(state, "p", 40, 16);
    recordSeq(state, "p", 50, 16);
    expect(state).toEqual(before);
    expect(state["$p"]).toMatchObject({ high: 50, applied: [40, 50] });
  });

  it("forgets applied seqs that fall out of the window as high advances", () => {
    const state: DedupState = {};
    for (const seq of [1, 2, 5, 9]) recordSeq(state, "p", seq, 4);
    expect(state["$p"]).toMatchObject({ high: 9, applied: [9] });
    recordSeq(state, "p", 7, 4);
    recordSeq(state, "p", 6, 4);
    expect(state["$p"]).toMatchObject({ high: 9, applied: [6, 7, 9] });
    recordSeq(state, "p", 11, 4);
    expect(state["$p"]).toMatchObject({ high: 11, applied: [9, 11] });
  });

  it("agrees with an unbounded model and stays within the memory bound on long random runs", () => {
    for (let seed = 1; seed <= 30; seed++) {
      const rng = mulberry32(seed);
      const window = 16 + Math.floor(rng() * 48);
      const state: DedupState = {};
      const applied = new Set<number>();
      let high = 0;
      let failure: string | null = null;
      const seen = { new: 0, duplicate: 0, "too-old": 0 };
      for (let step = 0; step < 3000; step++) {
        // Mostly fresh seqs just above high, with retries and stragglers below it.
        const r = rng();
        const seq =
          r < 0.5 ? high + 1 + Math.floor(rng() * 4) : Math.max(1, high - Math.floor(rng() * (window * 2)));
        const expected =
          seq > high ? "new" : seq <= high - window ? "too-old" : applied.has(seq) ? "duplicate" : "new";
        const verdict = judgeSeq(state, "p", seq, window);
        const at = `seed ${seed} step ${step} seq ${seq} high ${high} window ${window}`;
        seen[verdict] += 1;
        if (verdict !== expected) failure ??= `${at}: ${verdict}, expected ${expected}`;
        if (verdict === "new" && rng() < 0.9) {
          recordSeq(state, "p", seq, window);
          applied.add(seq);
          high = Math.max(high, seq);
        }
        const entry = state["$p"];
        if (entry) {
          const sorted = entry.applied.every((s, i) => i === 0 || s > (entry.applied[i - 1] ?? s));
          const inWindow = entry.applied.every((s) => s > high - window && s <= high);
          if (entry.high !== high || entry.applied.length > window || !sorted || !inWindow) {
            failure ??= `${at}: bad entry ${JSON.stringify(entry)}`;
          }
        }
        if (failure !== null) break;
      }
      expect(failure).toBeNull();
      expect(Math.min(seen.new, seen.duplicate, seen["too-old"]), `seed ${seed}: ${JSON.stringify(seen)}`).toBeGreaterThan(50);
    }
  });

  it("keeps producers independent", () => {
    const state: DedupState = {};
    for (let seq = 1; seq <= 1000; seq++) apply(state, "p1", seq, 16);
    expect(judgeSeq(state, "p2", 1, 16)).toBe("new");
    expect(judgeSeq(state, "p1", 1, 16)).toBe("too-old");
    expect(apply(state, "p2", 5, 16)).toBe("new");
    expect(apply(state, "p2", 3, 16)).toBe("new");
    expect(judgeSeq(state, "p1", 1000, 16)).toBe("duplicate");
    expect(judgeSeq(state, "p2", 1000, 16)).toBe("new");
    expect(judgeSeq(state, "p2", 4, 16)).toBe("new");
    expect(judgeSeq(state, "p2", 3, 16)).toBe("duplicate");
    expect(state["$p2"]).toMatchObject({ high: 5, applied: [3, 5] });
    expect(state["$p1"]?.high).toBe(1000);
  });

  it("survives a JSON round trip of its state", () => {
    const state: DedupState = {};
    for (const seq of [4, 1, 9, 7]) recordSeq(state, "p", seq, 16);
    const restored = JSON.parse(JSON.stringify(state)) as DedupState;
    for (let seq = 1; seq <= 10; seq++) expect(judgeSeq(restored, "p", seq, 16)).toBe(judgeSeq(state, "p", seq, 16));
  });

  it.each(["constructor", "__proto__"])(
    "treats producer id %s (a valid Flux-Producer-Id) like any other producer",
    (producer) => {
      const state: DedupState = {};
      expect(judgeSeq(state, producer, 1, 16)).toBe("new");
      recordSeq(state, producer, 1, 16);
      expect(judgeSeq(state, producer, 1, 16)).toBe("duplicate");
      expect(judgeSeq(state, producer, 2, 16)).toBe("new");
    },
  );

  it("keeps refusing seqs pruned under a smaller window after the window grows", () => {
    const state: DedupState = {};
    for (let seq = 1; seq <= 100; seq++) recordSeq(state, "p", seq, 16);
    expect(judgeSeq(state, "p", 50, 16)).toBe("too-old");
    // A later deploy raises the window: seq 50 was pruned, so it still cannot be judged.
    expect(judgeSeq(state, "p", 50, 64)).toBe("too-old");
    expect(judgeSeq(state, "p", 90, 64)).toBe("duplicate");
    recordSeq(state, "p", 101, 64);
    expect(judgeSeq(state, "p", 60, 64)).toBe("too-old");
  });
});
