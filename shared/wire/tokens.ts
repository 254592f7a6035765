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

/** The answer: the token and when it stops being accepted (epoch ms). */
export const MintTokenResponseSchema = z.object({ token: z.string(), expiresAtMs: z.number().int() });
export type MintTokenResponse = z.infer<typeof MintTokenResponseSchema>;

/** What a token grants, signed; `expMs` is epoch ms after which it is refused. Version `v` for later formats. */
export const TokenClaimsSchema = z.discriminatedUnion("scope", [
  z.strictObject({ v: z.literal(1), scope: z.literal("ingest"), streams: ResourcesSchema, expMs: z.number().int() }),
  z.strictObject({ v: z.literal(1), scope: z.literal("read"), dataflows: ResourcesSchema, expMs: z.number().int() }),
  z.strictObject({ v: z.literal(1), scope: z.literal("admin"), expMs: z.number().int() }),
]);
export type TokenClaims = z.infer<typeof TokenClaimsSchema>;
