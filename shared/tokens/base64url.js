/**
 * Base64url without padding (RFC 4648 §5), written out because `shared/` has no
 * platform `btoa`/`atob`. Decoding is strict: any other character or length fails.
 */
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const INDEX = new Map([...ALPHABET].map((char, i) => [char, i]));
/** Encodes bytes as base64url, no `=` padding. */
export function encodeBase64Url(bytes) {
    let out = "";
    for (let i = 0; i < bytes.length; i += 3) {
        const b0 = bytes[i] ?? 0;
        const b1 = bytes[i + 1] ?? 0;
        const b2 = bytes[i + 2] ?? 0;
        const n = (b0 << 16) | (b1 << 8) | b2;
        const chars = Math.min(4, Math.ceil(((bytes.length - i) * 8) / 6));
        for (let c = 0; c < chars; c += 1)
            out += ALPHABET[(n >> (18 - 6 * c)) & 63];
    }
    return out;
}
/**
 * Decodes unpadded base64url.
 * @returns null for a character outside the alphabet or an impossible length (4n+1).
 */
export function decodeBase64Url(text) {
    if (text.length % 4 === 1)
        return null;
    const out = new Uint8Array(Math.floor((text.length * 6) / 8));
    let bits = 0;
    let value = 0;
    let at = 0;
    for (const char of text) {
        const index = INDEX.get(char);
        if (index === undefined)
            return null;
        value = (value << 6) | index;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[at] = (value >> bits) & 255;
            at += 1;
        }
    }
    // Leftover bits must be zero, so each byte string has exactly one encoding.
    if ((value & ((1 << bits) - 1)) !== 0)
        return null;
    return out;
}
