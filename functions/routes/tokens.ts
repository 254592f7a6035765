/**
 * `POST /v1/admin/tokens` (issue 13): mints a signed token limited to ingest into named
 * streams, reading named dataflows, or admin, for at most a day, named by a random id.
 * `POST /v1/admin/tokens/{id}/revoke` (issue 26) adds the id to the coordinator's
 * revocation list. Only FLUX_ADMIN_TOKEN may do either (app.ts's access check); the first
 * secret of FLUX_TOKEN_SECRETS signs.
 */
import { Hono } from "hono";
import { zValidator } from "@hono/zod-validator";
import { z } from "zod";
import { FluxError } from "../../shared/errors.ts";
import { signToken } from "../../shared/tokens/signed-token.ts";
import { parseTokenSecrets } from "../../shared/tokens/token-secrets.ts";
import { MintTokenRequestSchema, TokenIdSchema, type MintTokenResponse, type RevokeTokenResponse, type TokenClaims } from "../../shared/wire/tokens.ts";
import type { AppEnv } from "../app-env.ts";
import { askRegistry } from "../cluster.ts";
import { onInvalid } from "../http-errors.ts";
import { strictJsonBody } from "../json-body.ts";
import { hmacSha256, newTokenId } from "../token-crypto.ts";

export const tokenRoutes = new Hono<AppEnv>()
  .post("/", strictJsonBody, zValidator("json", MintTokenRequestSchema, onInvalid), async (c) => {
    const secrets = parseTokenSecrets(c.env.FLUX_TOKEN_SECRETS);
    if (!secrets.ok) throw new FluxError("NOT_CONFIGURED", `cannot mint tokens: ${secrets.problem} (wrangler secret put FLUX_TOKEN_SECRETS)`);
    const { ttlSeconds, ...grant } = c.req.valid("json");
    const expiresAtMs = Date.now() + ttlSeconds * 1000;
    const id = newTokenId();
    const claims: TokenClaims = { v: 1, ...grant, expMs: expiresAtMs, id };
    // One secret at least, checked above.
    const token = await signToken(claims, secrets.secrets[0] as string, hmacSha256);
    const body: MintTokenResponse = { token, id, expiresAtMs };
    return c.json(body);
  })
  .post("/:id/revoke", zValidator("param", z.object({ id: TokenIdSchema }), onInvalid), async (c) => {
    const { id } = c.req.valid("param");
    // The id is the whole request: a body is refused rather than ignored.
    if ((await c.req.text()) !== "") throw new FluxError("INVALID_REQUEST", `POST /v1/admin/tokens/${id}/revoke takes no body; send none`);
    const { status, record } = await askRegistry(c.env, (registry) => registry.revokeToken(id));
    c.var.revocations.add(id, Date.now());
    const body: RevokeTokenResponse = { id, status, revokedAtMs: record.revokedAtMs, effectiveEverywhereAtMs: record.revokedAtMs + c.var.config.revocationCacheMs };
    return c.json(body);
  });
