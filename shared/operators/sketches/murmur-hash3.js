/**
 * Two MurmurHash3_x86_32 hashes of the string's UTF-16LE bytes under different seeds, in
 * one pass: 64 bits in all, so estimates stay unbiased far beyond 10^9 distinct values
 * (a single 32-bit hash collides noticeably above ~10^8).
 */
export function hash64(value) {
    let h1 = 0x9747b28c;
    let h2 = 0x5bd1e995;
    const units = value.length;
    for (let i = 0; i + 1 < units; i += 2) {
        const k = mixBlock(value.charCodeAt(i) | (value.charCodeAt(i + 1) << 16));
        h1 = mixState(h1, k);
        h2 = mixState(h2, k);
    }
    if (units & 1) {
        const k = mixBlock(value.charCodeAt(units - 1));
        h1 ^= k;
        h2 ^= k;
    }
    return [fmix32(h1 ^ (units * 2)), fmix32(h2 ^ (units * 2))];
}
/** MurmurHash3's per-block key mix. */
function mixBlock(block) {
    const k = Math.imul(block, 0xcc9e2d51);
    return Math.imul((k << 15) | (k >>> 17), 0x1b873593);
}
/** MurmurHash3's per-block state update. */
function mixState(h, k) {
    const x = h ^ k;
    return (Math.imul((x << 13) | (x >>> 19), 5) + 0xe6546b64) | 0;
}
/** MurmurHash3's finaliser (full 32-bit avalanche), as an unsigned number. */
function fmix32(h) {
    let x = h ^ (h >>> 16);
    x = Math.imul(x, 0x85ebca6b);
    x ^= x >>> 13;
    x = Math.imul(x, 0xc2b2ae35);
    return (x ^ (x >>> 16)) >>> 0;
}
