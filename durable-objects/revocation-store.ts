/**
 * The coordinator's revocation list in its key-value storage (issue 26): one key per
 * revoked token id, forgotten once every token it can name has expired
 * (`shared/tokens/revocations.ts`), so the list holds at most a day of revocations.
 */
import { isForgettable, planRevocation, type Revocation } from "../shared/tokens/revocations.ts";
import { RevokedTokenSchema, type RevokedToken } from "../shared/wire/tokens.ts";

const REVOKED = "revoked:";

/**
 * Revokes `id` at `nowMs` (idempotent: a repeat changes nothing and reports the first), and
 * drops the ids that no unexpired token can carry any more.
 */
export function revokeToken(kv: SyncKvStorage, id: string, nowMs: number): Revocation {
  const records = readAll(kv);
  const revocation = planRevocation(records.find((record) => record.id === id) ?? null, id, nowMs);
  for (const record of records) if (isForgettable(record, nowMs) && record.id !== id) kv.delete(REVOKED + record.id);
  if (revocation.status === "revoked") kv.put(REVOKED + id, revocation.record);
  return revocation;
}

/** The revoked ids that an unexpired token may still carry at `nowMs`. */
export function revokedIds(kv: SyncKvStorage, nowMs: number): string[] {
  return readAll(kv)
    .filter((record) => !isForgettable(record, nowMs))
    .map((record) => record.id);
}

function readAll(kv: SyncKvStorage): RevokedToken[] {
  return [...kv.list({ prefix: REVOKED })].map(([, value]) => RevokedTokenSchema.parse(value));
}
