/** The platform side of signed tokens: HMAC-SHA-256 through the standard WebCrypto API (`crypto.subtle`). */
import type { HmacSha256 } from "../shared/tokens/signed-token.ts";

/** Signs `message` with `secret`, both as UTF-8. */
export const hmacSha256: HmacSha256 = async (secret, message) => {
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(message)));
};
