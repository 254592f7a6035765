/**
 * Keys reach partitions through key groups (the unit a repartitioning moves between
 * replica pairs, as in the Flux 2003 paper; issue 28): a key hashes to one of `groups` key
 * groups, and a map says which partition owns each group. A dataflow created since issue 28
 * has at least {@link MIN_KEY_GROUPS} groups (a multiple of P), stored in its record; one
 * stored before has 16·P (no table in its record). Either starts with group g on partition
 * g mod P, and since P divides the group count, a key starts exactly where
 * `FNV-1a(key) mod P` always put it: routers of any version agree until a group moves.
 */
import type { KeyGroupTable } from "../wire/routing.ts";

/** Key groups per partition a dataflow stored before issue 28 has. */
export const KEY_GROUPS_PER_PARTITION = 16;

/** The fewest key groups a dataflow created since issue 28 has: room for 64 partitions (the most a dataflow has) of 4 groups each. */
export const MIN_KEY_GROUPS = 256;

/** Which partition owns each key group. */
export interface KeyGroupMap {
  /** How many key groups keys hash to. */
  groups: number;
  /** How many partitions own them. */
  partitions: number;
  /** The owner of each group, by group index; null: group g belongs to partition g mod `partitions`. */
  owners: readonly number[] | null;
}

/** @throws RangeError unless `partitions` is a positive integer. */
function requirePartitions(partitions: number): void {
  if (!Number.isInteger(partitions) || partitions < 1) throw new RangeError(`partition count must be a positive integer, got ${partitions}`);
}

/** The map a dataflow of `partitions` partitions starts with. @throws RangeError unless a positive integer. */
export function defaultKeyGroupMap(partitions: number): KeyGroupMap {
  requirePartitions(partitions);
  return { groups: partitions * KEY_GROUPS_PER_PARTITION, partitions, owners: null };
}

/**
 * A new dataflow's table for `partitions` partitions: the smallest multiple of P that is at
 * least {@link MIN_KEY_GROUPS} (256 for P = 1, 2, 4, ..., 64; 258 for P = 3), group g on
 * partition g mod P, which is FNV-1a mod P. @throws RangeError unless a positive integer.
 */
export function newKeyGroupTable(partitions: number): KeyGroupTable {
  requirePartitions(partitions);
  return { groups: Math.ceil(MIN_KEY_GROUPS / partitions) * partitions, owners: null };
}

/** The map of a stored dataflow: its table over its partitions, or (none: stored before issue 28) the default map. */
export function keyGroupMapOf(record: { keyGroups: KeyGroupTable | null; routes: readonly unknown[] }): KeyGroupMap {
  const partitions = record.routes.length;
  return record.keyGroups === null ? defaultKeyGroupMap(partitions) : { groups: record.keyGroups.groups, partitions, owners: record.keyGroups.owners };
}

/** The key group of `key`: 32-bit FNV-1a over its UTF-16 code units, mod `groups`. */
export function keyGroupOf(key: string, groups: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % groups;
}

/** The partition that owns key group `group` under `map`. @throws RangeError for a group outside the map. */
export function ownerOf(map: KeyGroupMap, group: number): number {
  if (!Number.isInteger(group) || group < 0 || group >= map.groups) throw new RangeError(`key group ${group} is outside 0..${map.groups - 1}`);
  const owner = map.owners === null ? group % map.partitions : map.owners[group];
  if (owner === undefined || owner < 0 || owner >= map.partitions) throw new RangeError(`key group ${group} has no owner among ${map.partitions} partitions`);
  return owner;
}

/** How many key groups each partition owns under `map`, by partition. */
export function groupsPerPartition(map: KeyGroupMap): number[] {
  const owned = new Array<number>(map.partitions).fill(0);
  for (let g = 0; g < map.groups; g++) {
    const owner = ownerOf(map, g);
    owned[owner] = (owned[owner] ?? 0) + 1;
  }
  return owned;
}

/** The partition that owns `key` under `map` (on the hot path: one hash and one lookup). @throws RangeError for a map with no owner for its group. */
export function partitionOfKey(map: KeyGroupMap, key: string): number {
  const group = keyGroupOf(key, map.groups);
  if (map.owners === null) return group % map.partitions;
  return ownerOf(map, group);
}
