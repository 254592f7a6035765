/**
 * The revocation list's rules (issue 26): a revoked token id is kept until every token that
 * can carry it has expired, then forgotten, so the list holds at most a day of revocations.
 * Revoking again is a no-op that reports the first revocation.
 */
import { MAX_TOKEN_TTL_SECONDS, type RevokedToken } from "../wire/tokens.ts";

/**
 * How long a revoked id is kept after its revocation, ms: the longest token lifetime (a token
 * revoked at once after minting lives that long) plus a minute for clocks that disagree.
 */
export const REVOCATION_RETENTION_MS = MAX_TOKEN_TTL_SECONDS * 1000 + 60_000;

/** Outcome of revoking an id: the record to keep, and whether this call made it. */
export type Revocation = { status: "revoked" | "already-revoked"; record: RevokedToken };

/**
 * Revokes `id` at `nowMs` (epoch ms). `existing` is what storage holds for it; one already
 * past its `forgetAtMs` counts as absent (every token it named has expired).
 */
export function planRevocation(existing: RevokedToken | null, id: string, nowMs: number): Revocation {
  if (existing && !isForgettable(existing, nowMs)) return { status: "already-revoked", record: existing };
  return { status: "revoked", record: { v: 1, id, revokedAtMs: nowMs, forgetAtMs: nowMs + REVOCATION_RETENTION_MS } };
}

/** Whether `record` may be dropped at `nowMs`: no token naming its id can still be accepted. */
export function isForgettable(record: RevokedToken, nowMs: number): boolean {
  return nowMs >= record.forgetAtMs;
}
