/**
 * Keys reach partitions through key groups (the unit a later repartitioning moves between
 * replica pairs, as in the Flux 2003 paper): a key hashes to one of `groups` key groups,
 * and a map says which partition owns each group. A dataflow of P partitions has 16·P
 * groups, and the default map gives group g to partition g mod P, so a key lands exactly
 * where `FNV-1a(key) mod P` always put it (stable across deploys and stored dataflows).
 */

/** Key groups per partition a dataflow starts with. */
export const KEY_GROUPS_PER_PARTITION = 16;

/** Which partition owns each key group. */
export interface KeyGroupMap {
  /** How many key groups keys hash to. */
  groups: number;
  /** How many partitions own them. */
  partitions: number;
  /** The owner of each group, by group index; null: group g belongs to partition g mod `partitions`. */
  owners: readonly number[] | null;
}

/** The map a dataflow of `partitions` partitions starts with. @throws RangeError unless a positive integer. */
export function defaultKeyGroupMap(partitions: number): KeyGroupMap {
  if (!Number.isInteger(partitions) || partitions < 1) throw new RangeError(`partition count must be a positive integer, got ${partitions}`);
  return { groups: partitions * KEY_GROUPS_PER_PARTITION, partitions, owners: null };
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
