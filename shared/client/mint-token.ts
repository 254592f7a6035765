/**
 * `POST /v1/admin/tokens` (admin token): mints a scoped, expiring token (issue 13, part 4,
 * built on the server separately). Ingest tokens may post to `streams`, read tokens may
 * read `dataflows`; admin tokens may do everything.
 */
import { z } from "zod";

export const MintTokenRequestSchema = z.strictObject({
  scope: z.enum(["ingest", "read", "admin"]),
  streams: z.array(z.string().min(1)).optional(),
  dataflows: z.array(z.string().min(1)).optional(),
  ttlSeconds: z.number().int().min(1),
});
export type MintTokenRequest = z.infer<typeof MintTokenRequestSchema>;

export const MintTokenResponseSchema = z.object({ token: z.string(), expiresAtMs: z.number() });
