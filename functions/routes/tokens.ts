/**
 * `POST /v1/admin/tokens` (issue 13): mints a signed token limited to ingest into named
 * streams, reading named dataflows, or admin, for at most a day. Only FLUX_ADMIN_TOKEN
 * may mint (app.ts's access check); the first secret of FLUX_TOKEN_SECRETS signs.
 */
import { Hono } from "hono";
import { zValidator } from "@hono/zod-validator";
import { FluxError } from "../../shared/errors.ts";
import { signToken } from "../../shared/tokens/signed-token.ts";
import { parseTokenSecrets } from "../../shared/tokens/token-secrets.ts";
import { MintTokenRequestSchema, type MintTokenResponse, type TokenClaims } from "../../shared/wire/tokens.ts";
import type { AppEnv } from "../app-env.ts";
import { onInvalid } from "../http-errors.ts";
import { strictJsonBody } from "../json-body.ts";
import { hmacSha256 } from "../token-crypto.ts";

export const tokenRoutes = new Hono<AppEnv>().post("/", strictJsonBody, zValidator("json", MintTokenRequestSchema, onInvalid), async (c) => {
  const secrets = parseTokenSecrets(c.env.FLUX_TOKEN_SECRETS);
  if (!secrets.ok) throw new FluxError("NOT_CONFIGURED", `cannot mint tokens: ${secrets.problem} (wrangler secret put FLUX_TOKEN_SECRETS)`);
  const { ttlSeconds, ...grant } = c.req.valid("json");
  const expiresAtMs = Date.now() + ttlSeconds * 1000;
  const claims: TokenClaims = { v: 1, ...grant, expMs: expiresAtMs };
  // One secret at least, checked above.
  const token = await signToken(claims, secrets.secrets[0] as string, hmacSha256);
  const body: MintTokenResponse = { token, expiresAtMs };
  return c.json(body);
});
