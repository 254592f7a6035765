/**
 * Key groups (issue 12: keys routed through key groups, so a later repartitioning can move
 * groups between replica pairs): the default map puts every key exactly where the plain
 * hash mod P did, and an explicit map moves whole groups.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { defaultKeyGroupMap, keyGroupOf, ownerOf, KEY_GROUPS_PER_PARTITION } from "../../shared/keygroups/key-groups.ts";
import { partitionFor } from "../../shared/partitioner.ts";

/** FNV-1a mod P, written out independently: what routing was before key groups. */
function fnvModP(key: string, p: number): number {
  let h = 2166136261;
  for (const unit of Array.from({ length: key.length }, (_, i) => key.charCodeAt(i))) h = Number((BigInt((h ^ unit) >>> 0) * 16777619n) % 4294967296n);
  return h % p;
}

describe("key groups", () => {
  it("route every key to FNV-1a mod P under the default map, for every P from 1 to 64", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.integer({ min: 1, max: 64 }), (key, p) => {
        expect(partitionFor(key, p)).toBe(fnvModP(key, p));
      }),
      { numRuns: 2_000 },
    );
  });

  it("give a dataflow 16 groups per partition, each owned by group mod P", () => {
    const map = defaultKeyGroupMap(4);
    expect(map.groups).toBe(4 * KEY_GROUPS_PER_PARTITION);
    expect(Array.from({ length: map.groups }, (_, g) => ownerOf(map, g))).toEqual(Array.from({ length: 64 }, (_, g) => g % 4));
  });

  it("move exactly the keys of a reassigned group under an explicit map", () => {
    const base = defaultKeyGroupMap(2);
    const owners = Array.from({ length: base.groups }, (_, g) => ownerOf(base, g));
    owners[5] = 1 - (owners[5] ?? 0);
    const moved = { ...base, owners };
    for (let i = 0; i < 2_000; i++) {
      const key = `key-${i}`;
      const group = keyGroupOf(key, base.groups);
      const before = ownerOf(base, group);
      expect(ownerOf(moved, group)).toBe(group === 5 ? 1 - before : before);
    }
  });

  it("refuses groups outside the map and maps without an owner for a group", () => {
    const map = defaultKeyGroupMap(3);
    expect(() => ownerOf(map, map.groups)).toThrow(RangeError);
    expect(() => ownerOf(map, -1)).toThrow(RangeError);
    expect(() => ownerOf({ ...map, owners: [0, 1] }, 2)).toThrow(/no owner/);
    expect(() => defaultKeyGroupMap(0)).toThrow(RangeError);
  });
});
