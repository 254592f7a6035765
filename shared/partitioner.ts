/**
 * The partition of a key under the default map of 16·P key groups
 * (`keygroups/key-groups.ts`): FNV-1a over the key's UTF-16 code units mod P. It is where
 * a dataflow stored before issue 28 (no key-group table) puts a key, and how the bench's
 * baselines split batches; the product routes by each dataflow's stored table
 * (`keyGroupMapOf`, `partitionOfKey`).
 */
import { defaultKeyGroupMap, partitionOfKey, type KeyGroupMap } from "./keygroups/key-groups.ts";

/** The default key-group map per partition count, built once (P is at most 64). */
const maps = new Map<number, KeyGroupMap>();

/**
 * The partition in `[0, partitionCount)` that owns `key`.
 * @param partitionCount a positive integer; throws otherwise.
 */
export function partitionFor(key: string, partitionCount: number): number {
  let map = maps.get(partitionCount);
  if (!map) maps.set(partitionCount, (map = defaultKeyGroupMap(partitionCount)));
  return partitionOfKey(map, key);
}
