/** The platform side of signed tokens: HMAC-SHA-256 through the standard WebCrypto API (`crypto.subtle`). */
import type { HmacSha256 } from "../shared/tokens/signed-token.ts";

/** Signs `message` with `secret`, both as UTF-8. */
export const hmacSha256: HmacSha256 = async (secret, message) => {
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(message)));
};

/** SHA-256 digests of the configured long-lived tokens, per isolate (values, never promises: workerd forbids sharing those between requests). */
const configuredDigests = new Map<string, Uint8Array>();

async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
}

/**
 * Which of `configured` (in order) `offered` equals, or -1: compares SHA-256 digests in
 * constant time, hashing the offered token once and each configured one once per isolate.
 */
export async function matchToken(offered: string, configured: readonly string[]): Promise<number> {
  const digest = await sha256(offered);
  let found = -1;
  for (const [index, token] of configured.entries()) {
    if (token === "") continue;
    let expected = configuredDigests.get(token);
    if (!expected) configuredDigests.set(token, (expected = await sha256(token)));
    let diff = 0;
    for (let i = 0; i < digest.length; i++) diff |= (digest[i] ?? 0) ^ (expected[i] ?? 0);
    if (diff === 0 && found === -1) found = index;
  }
  return found;
}
