/** Scoped tokens in workerd tests: minting through the API, and signing directly with the test secrets. */
import { expect } from "vitest";
import { hmacSha256 } from "../../functions/token-crypto.ts";
import { signToken } from "../../shared/tokens/signed-token.ts";
import { MintTokenResponseSchema, type MintTokenRequest, type MintTokenResponse, type TokenClaims } from "../../shared/wire/tokens.ts";
import { call } from "./api.ts";

/** The two secrets vitest.config.ts configures: the first signs, both verify. */
export const [NEW_SECRET, OLD_SECRET] = ["test-secret-new-0123456789abcdef0123", "test-secret-old-0123456789abcdef0123"] as const;

/** Mints a token with the admin token; the answer must be a 200. */
export async function mint(request: MintTokenRequest): Promise<MintTokenResponse> {
  const res = await call("POST", "/v1/admin/tokens", request, { authorization: "Bearer test-admin-token" });
  expect(res.status, await res.clone().text()).toBe(200);
  return MintTokenResponseSchema.parse(await res.json());
}

/** Signs claims directly (an expiry in the past, a retired secret) without the endpoint. */
export function sign(claims: TokenClaims, secret: string = NEW_SECRET): Promise<string> {
  return signToken(claims, secret, hmacSha256);
}

/** The `Authorization` header for a token. */
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
