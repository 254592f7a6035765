/** The stable partitioner: FNV-1a over the key, mod P, pinned so a change of hash is caught. */
import { describe, expect, it } from "vitest";
import { partitionFor } from "../../shared/partitioner.ts";

describe("partitionFor", () => {
  it("returns the same partition for the same key on every call", () => {
    for (let i = 0; i < 500; i++) {
      const key = `k-${i}-${"x".repeat(i % 7)}`;
      const copy = [...key].join("");
      expect(partitionFor(copy, 13)).toBe(partitionFor(key, 13));
    }
  });

  it("returns an integer in [0, partitionCount) for every count from 1 to 64", () => {
    const keys = ["", "a", "A", "0", " ", "page-1", "user:42", "é", "😀", "x".repeat(300)];
    for (let i = 0; i < 200; i++) keys.push(`key-${i}`);
    for (let count = 1; count <= 64; count++) {
      for (const key of keys) {
        const p = partitionFor(key, count);
        expect(Number.isInteger(p), `${key} over ${count}`).toBe(true);
        expect(p, `${key} over ${count}`).toBeGreaterThanOrEqual(0);
        expect(p, `${key} over ${count}`).toBeLessThan(count);
      }
    }
  });

  it("sends every key to partition 0 when there is one partition", () => {
    for (const key of ["", "a", "zzz", "😀"]) expect(partitionFor(key, 1)).toBe(0);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, -Number.MAX_SAFE_INTEGER])(
    "rejects partition count %s with a RangeError",
    (count) => {
      expect(() => partitionFor("a", count)).toThrow(RangeError);
    },
  );

  it("spreads 10k keys over 16 partitions within 30% of the mean", () => {
    for (const make of [(i: number) => `key-${i}`, (i: number) => String(i), (i: number) => `user:${i * 7919}@example.com`]) {
      const counts = new Array<number>(16).fill(0);
      for (let i = 0; i < 10_000; i++) {
        const p = partitionFor(make(i), 16);
        counts[p] = (counts[p] ?? 0) + 1;
      }
      const mean = 10_000 / 16;
      for (const [p, n] of counts.entries()) {
        expect(n, `partition ${p} of ${make(0)}…: ${counts.join(",")}`).toBeGreaterThanOrEqual(mean * 0.7);
        expect(n, `partition ${p} of ${make(0)}…: ${counts.join(",")}`).toBeLessThanOrEqual(mean * 1.3);
      }
    }
  });

  it("spreads keys over a partition count that is not a power of two", () => {
    const counts = new Array<number>(7).fill(0);
    for (let i = 0; i < 7_000; i++) {
      const p = partitionFor(`user-${i}`, 7);
      counts[p] = (counts[p] ?? 0) + 1;
    }
    for (const n of counts) expect(n, counts.join(",")).toBeGreaterThanOrEqual(700);
  });

  it("is 32-bit FNV-1a: published test vectors come back with 2^32 partitions", () => {
    // Standard FNV-1a 32-bit vectors (ASCII, so UTF-16 code units equal bytes).
    expect(partitionFor("", 2 ** 32)).toBe(0x811c9dc5);
    expect(partitionFor("a", 2 ** 32)).toBe(0xe40c292c);
    expect(partitionFor("foobar", 2 ** 32)).toBe(0xbf9cf968);
  });

  it("keeps the partitions of known keys (regression guard against a change of hash)", () => {
    // Computed once from the current implementation and hard-coded on purpose:
    // changing the hash reroutes every existing key, so this must fail loudly.
    const pinned: [string, number, number][] = [
      ["page-1", 4, 0],
      ["page-1", 16, 0],
      ["user:42", 16, 2],
      ["user:42", 64, 2],
      ["checkout", 8, 1],
      ["42", 4, 3],
      ["a", 16, 12],
      ["é", 16, 4],
      ["😀", 16, 8],
    ];
    for (const [key, count, partition] of pinned) expect(partitionFor(key, count), `${key} over ${count}`).toBe(partition);
    expect(partitionFor("😀", 2 ** 32)).toBe(0xcb31c4b8);
  });
});
