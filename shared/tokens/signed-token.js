/**
 * Signed, expiring tokens (issue 13): `flux1.<claims>.<signature>`, where `claims` is the
 * base64url of the claims' JSON and `signature` the base64url HMAC-SHA-256 of
 * `flux1.<claims>`. The first configured secret signs; every configured secret verifies,
 * so a secret is rotated by adding the new one first and removing the old one later.
 */
import { TokenClaimsSchema } from "../wire/tokens.ts";
import { decodeBase64Url, encodeBase64Url } from "./base64url.ts";
const PREFIX = "flux1";
/** Longest token accepted, characters: far above what 50 names need, and bounded before any work. */
const MAX_TOKEN_LENGTH = 8192;
/** Whether `text` has the shape of a signed token (as opposed to a long-lived secret). */
export function isSignedToken(text) {
    return text.startsWith(`${PREFIX}.`);
}
/** Signs `claims` with `secret`. Names are ASCII (NameSchema), so the JSON is ASCII too. */
export async function signToken(claims, secret, hmac) {
    const body = encodeBase64Url(asciiBytes(JSON.stringify(claims)));
    const signed = `${PREFIX}.${body}`;
    return `${signed}.${encodeBase64Url(await hmac(secret, signed))}`;
}
/**
 * Checks a token's signature against every secret, then its claims and expiry.
 * @param nowMs epoch ms; a token is refused from `expMs` on.
 */
export async function verifyToken(token, secrets, nowMs, hmac) {
    if (token.length > MAX_TOKEN_LENGTH)
        return { ok: false, reason: "malformed" };
    const parts = token.split(".");
    if (parts.length !== 3 || parts[0] !== PREFIX)
        return { ok: false, reason: "malformed" };
    const [, body = "", signatureText = ""] = parts;
    const signature = decodeBase64Url(signatureText);
    const claimsBytes = decodeBase64Url(body);
    if (!signature || !claimsBytes)
        return { ok: false, reason: "malformed" };
    let valid = false;
    for (const secret of secrets) {
        // Every secret is tried, so timing does not tell which one matched.
        if (equalInConstantTime(await hmac(secret, `${PREFIX}.${body}`), signature))
            valid = true;
    }
    if (!valid)
        return { ok: false, reason: "signature" };
    const claims = TokenClaimsSchema.safeParse(parseJson(claimsBytes));
    if (!claims.success)
        return { ok: false, reason: "malformed" };
    if (nowMs >= claims.data.expMs)
        return { ok: false, reason: "expired" };
    return { ok: true, claims: claims.data };
}
function asciiBytes(text) {
    // JSON.stringify leaves non-ASCII as is; escaping it keeps the payload one byte per char.
    const ascii = text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
    return Uint8Array.from(ascii, (c) => c.charCodeAt(0));
}
function parseJson(bytes) {
    if (bytes.some((b) => b > 0x7f))
        return undefined;
    try {
        return JSON.parse(String.fromCharCode(...bytes));
    }
    catch {
        return undefined;
    }
}
function equalInConstantTime(a, b) {
    if (a.length !== b.length)
        return false;
    let diff = 0;
    for (let i = 0; i < a.length; i += 1)
        diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
    return diff === 0;
}
