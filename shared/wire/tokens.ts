/**
 * Scoped, expiring tokens (issue 13): the mint request and answer, and the claims a
 * token carries. Claims name their resources explicitly; there are no wildcards.
 */
import * as z from "zod";
import { NameSchema } from "./dataflow-spec.ts";

/** Longest lifetime a minted token may have, seconds (24 h). */
export const MAX_TOKEN_TTL_SECONDS = 86_400;

/** Most streams or dataflows one token may name. */
const MAX_TOKEN_RESOURCES = 50;

const ResourcesSchema = z.array(NameSchema).min(1).max(MAX_TOKEN_RESOURCES);
/** A mint request's list: as a token's, and each name once (a repeated name is most likely a mistake). */
const DistinctResourcesSchema = ResourcesSchema.superRefine((names, ctx) => {
  const repeated = names.find((name, i) => names.indexOf(name) !== i);
  if (repeated !== undefined) ctx.addIssue({ code: "custom", message: `'${repeated}' is named more than once; name each once` });
});
const TtlSchema = z.number().int().min(1).max(MAX_TOKEN_TTL_SECONDS);

/**
 * `POST /v1/admin/tokens`: `ingest` names `streams`, `read` names `dataflows`, `admin`
 * names neither; anything else (an unknown field, the wrong list for the scope) is refused.
 */
export const MintTokenRequestSchema = z.discriminatedUnion("scope", [
  z.strictObject({ scope: z.literal("ingest"), streams: DistinctResourcesSchema, ttlSeconds: TtlSchema }),
  z.strictObject({ scope: z.literal("read"), dataflows: DistinctResourcesSchema, ttlSeconds: TtlSchema }),
  z.strictObject({ scope: z.literal("admin"), ttlSeconds: TtlSchema }),
]);
export type MintTokenRequest = z.infer<typeof MintTokenRequestSchema>;

/**
 * A token's id (issue 26): 16 base64url characters, the encoding of 12 random bytes (96
 * bits), named in the mint answer and by `POST /v1/admin/tokens/{id}/revoke`.
 */
export const TokenIdSchema = z.string().regex(/^[A-Za-z0-9_-]{16}$/, "a token id: 16 characters of A-Z, a-z, 0-9, '-' and '_' (the id the mint answer named)");

/** The answer: the token, its id (to revoke it by) and when it stops being accepted (epoch ms). */
export const MintTokenResponseSchema = z.object({ token: z.string(), id: TokenIdSchema, expiresAtMs: z.number().int() });
export type MintTokenResponse = z.infer<typeof MintTokenResponseSchema>;

/**
 * What a token grants, signed; `expMs` is epoch ms after which it is refused. `id` names it
 * for revocation; tokens minted before ids existed have none (and cannot be revoked one by
 * one). Version `v` for later formats.
 */
const claims = { v: z.literal(1), expMs: z.number().int(), id: TokenIdSchema.optional() };
export const TokenClaimsSchema = z.discriminatedUnion("scope", [
  z.strictObject({ ...claims, scope: z.literal("ingest"), streams: ResourcesSchema }),
  z.strictObject({ ...claims, scope: z.literal("read"), dataflows: ResourcesSchema }),
  z.strictObject({ ...claims, scope: z.literal("admin") }),
]);
export type TokenClaims = z.infer<typeof TokenClaimsSchema>;

/** `POST /v1/admin/tokens/{id}/revoke`'s answer: the first revocation of `id`, or a repeat of it (nothing changed). */
export const RevokeTokenResponseSchema = z.object({
  id: TokenIdSchema,
  status: z.enum(["revoked", "already-revoked"]),
  /** When the registry recorded the revocation (the first one, for a repeat), epoch ms. */
  revokedAtMs: z.number().int(),
  /** From then on every router refuses the token (`revokedAtMs` + FLUX_REVOCATION_CACHE_MS), epoch ms; the router that answered refuses it at once. */
  effectiveEverywhereAtMs: z.number().int(),
});
export type RevokeTokenResponse = z.infer<typeof RevokeTokenResponseSchema>;

/** A revoked token id in the registry's storage, kept until `forgetAtMs` (epoch ms), when every token it can name has expired. */
export const RevokedTokenSchema = z.object({ v: z.literal(1), id: TokenIdSchema, revokedAtMs: z.number().int(), forgetAtMs: z.number().int() });
export type RevokedToken = z.infer<typeof RevokedTokenSchema>;
