/**
 * Key groups (issue 12: keys routed through key groups, so a later repartitioning can move
 * groups between replica pairs): the default map puts every key exactly where the plain
 * hash mod P did, and an explicit map moves whole groups.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { defaultKeyGroupMap, groupsPerPartition, keyGroupMapOf, keyGroupOf, newKeyGroupTable, ownerOf, partitionOfKey, KEY_GROUPS_PER_PARTITION, MIN_KEY_GROUPS } from "../../shared/keygroups/key-groups.ts";
import { DataflowRecordSchema } from "../../shared/wire/routing.ts";
import { record } from "../helpers/fixtures.ts";
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

  it("give a new dataflow the smallest multiple of P from 256 groups, so every key starts where FNV-1a mod P put it", () => {
    for (let p = 1; p <= 64; p++) {
      const { groups, owners } = newKeyGroupTable(p);
      expect(owners).toBeNull();
      expect(groups % p, `P=${p}`).toBe(0);
      expect(groups >= MIN_KEY_GROUPS && groups - p < MIN_KEY_GROUPS, `P=${p}`).toBe(true);
    }
    expect(newKeyGroupTable(3).groups).toBe(258);
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.integer({ min: 1, max: 64 }), (key, p) => {
        expect(partitionOfKey(keyGroupMapOf({ keyGroups: newKeyGroupTable(p), routes: Array.from({ length: p }) }), key)).toBe(fnvModP(key, p));
      }),
      { numRuns: 2_000 },
    );
    expect(() => newKeyGroupTable(0)).toThrow(RangeError);
  });

  it("read a stored dataflow's table: its own for one created now, 16 groups per partition for one stored without a table", () => {
    const created = record("df");
    const partitions = created.routes.length;
    expect(created.keyGroups).toEqual(newKeyGroupTable(partitions));
    const map = keyGroupMapOf(created);
    expect(map).toEqual({ ...newKeyGroupTable(partitions), partitions });
    expect(groupsPerPartition(map).reduce((a, b) => a + b, 0)).toBe(map.groups);
    // A record stored before issue 28 parses with no table, and routes as it always did.
    const { keyGroups: _dropped, ...stored } = JSON.parse(JSON.stringify(created)) as Record<string, unknown>;
    const old = DataflowRecordSchema.parse(stored);
    expect(old.keyGroups).toBeNull();
    expect(keyGroupMapOf(old)).toEqual(defaultKeyGroupMap(partitions));
    for (let i = 0; i < 500; i++) expect(partitionOfKey(keyGroupMapOf(old), `k${i}`)).toBe(partitionFor(`k${i}`, partitions));
  });

  it("count each partition's groups, and route a key to its group's owner under an explicit table", () => {
    const map = { groups: 8, partitions: 3, owners: [0, 0, 0, 1, 1, 2, 2, 2] };
    expect(groupsPerPartition(map)).toEqual([3, 2, 3]);
    expect(groupsPerPartition(defaultKeyGroupMap(3))).toEqual([16, 16, 16]);
    for (let i = 0; i < 200; i++) expect(partitionOfKey(map, `k${i}`)).toBe(map.owners[keyGroupOf(`k${i}`, 8)]);
    expect(() => partitionOfKey({ ...map, owners: [0] }, "k1")).toThrow(RangeError);
  });
});
