/**
 * Maps a key to its partition through its key group (`keygroups/key-groups.ts`): 32-bit
 * FNV-1a over the key's UTF-16 code units, mod 16·P, owned by group mod P, which is the
 * hash mod P. Stable across deploys and runtimes; routers and tests call it, operators never do.
 */
import { defaultKeyGroupMap, keyGroupOf, ownerOf, type KeyGroupMap } from "./keygroups/key-groups.ts";

/** The default key-group map per partition count, built once (P is at most 64). */
const maps = new Map<number, KeyGroupMap>();

/**
 * The partition in `[0, partitionCount)` that owns `key`.
 * @param partitionCount a positive integer; throws otherwise.
 */
export function partitionFor(key: string, partitionCount: number): number {
  let map = maps.get(partitionCount);
  if (!map) maps.set(partitionCount, (map = defaultKeyGroupMap(partitionCount)));
  return ownerOf(map, keyGroupOf(key, map.groups));
}
