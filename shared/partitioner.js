/**
 * Maps a key to its partition: 32-bit FNV-1a over the key's UTF-16 code units, mod P.
 * Stable across deploys and runtimes; routers and tests call it, operators never do.
 */
/**
 * The partition in `[0, partitionCount)` that owns `key`.
 * @param partitionCount a positive integer; throws otherwise.
 */
export function partitionFor(key, partitionCount) {
    if (!Number.isInteger(partitionCount) || partitionCount < 1) {
        throw new RangeError(`partition count must be a positive integer, got ${partitionCount}`);
    }
    let hash = 0x811c9dc5;
    for (let i = 0; i < key.length; i++) {
        hash ^= key.charCodeAt(i);
        hash = Math.imul(hash, 0x01000193);
    }
    return (hash >>> 0) % partitionCount;
}
