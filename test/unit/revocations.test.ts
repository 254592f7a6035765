/**
 * Revoking tokens one by one (issue 26): a token's id travels in its signed claims; a
 * revoked id is kept exactly as long as a token can carry it; a router's copy of the list
 * is refreshed once it is FLUX_REVOCATION_CACHE_MS old, one fetch at a time, and keeps
 * its last list while the coordinator cannot answer.
 */
import { describe, expect, it } from "vitest";
import { hmacSha256, newTokenId } from "../../functions/token-crypto.ts";
import { RevocationCache } from "../../shared/tokens/revocation-cache.ts";
import { isForgettable, planRevocation, REVOCATION_RETENTION_MS } from "../../shared/tokens/revocations.ts";
import { signToken, verifyToken } from "../../shared/tokens/signed-token.ts";
import { MAX_TOKEN_TTL_SECONDS, TokenIdSchema, type TokenClaims } from "../../shared/wire/tokens.ts";

const SECRET = "s".repeat(32);
const ID = "AbCdEfGhIjKl-_01";

describe("token ids", () => {
  it("are 16 base64url characters, fresh each time", () => {
    const ids = new Set(Array.from({ length: 100 }, () => newTokenId()));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(TokenIdSchema.safeParse(id).success, id).toBe(true);
    for (const bad of ["", "A".repeat(15), "A".repeat(17), `${"A".repeat(15)}=`, `${"A".repeat(15)}/`]) expect(TokenIdSchema.safeParse(bad).success, bad).toBe(false);
  });

  it("travel in the signed claims, and a token without one still verifies", async () => {
    const withId: TokenClaims = { v: 1, scope: "ingest", streams: ["clicks"], expMs: 10_000, id: ID };
    expect(await verifyToken(await signToken(withId, SECRET, hmacSha256), [SECRET], 0, hmacSha256)).toEqual({ ok: true, claims: withId });
    const legacy: TokenClaims = { v: 1, scope: "admin", expMs: 10_000 };
    expect(await verifyToken(await signToken(legacy, SECRET, hmacSha256), [SECRET], 0, hmacSha256)).toEqual({ ok: true, claims: legacy });
    const badId = { ...withId, id: "not-an-id" } as unknown as TokenClaims;
    expect(await verifyToken(await signToken(badId, SECRET, hmacSha256), [SECRET], 0, hmacSha256)).toEqual({ ok: false, reason: "malformed" });
  });
});

describe("the revocation list", () => {
  it("keeps a revoked id for the longest token lifetime and a minute, then forgets it", () => {
    expect(REVOCATION_RETENTION_MS).toBe(MAX_TOKEN_TTL_SECONDS * 1000 + 60_000);
    const { status, record } = planRevocation(null, ID, 1_000);
    expect(status).toBe("revoked");
    expect(record).toEqual({ v: 1, id: ID, revokedAtMs: 1_000, forgetAtMs: 1_000 + REVOCATION_RETENTION_MS });
    expect(isForgettable(record, record.forgetAtMs - 1)).toBe(false);
    expect(isForgettable(record, record.forgetAtMs)).toBe(true);
  });

  it("answers a repeat with the first revocation, unless that one was already forgotten", () => {
    const first = planRevocation(null, ID, 1_000).record;
    expect(planRevocation(first, ID, 5_000)).toEqual({ status: "already-revoked", record: first });
    expect(planRevocation(first, ID, first.forgetAtMs)).toMatchObject({ status: "revoked", record: { revokedAtMs: first.forgetAtMs } });
  });
});

/** A cache over a fake coordinator: `lists` answers in turn, `calls` counts fetches. */
function cacheOver(maxAgeMs: number, answer: () => Promise<readonly string[]>) {
  let calls = 0;
  const cache = new RevocationCache(maxAgeMs, () => {
    calls += 1;
    return answer();
  });
  return { cache, calls: () => calls };
}

describe("RevocationCache", () => {
  it("fetches once, then trusts the list until it is maxAgeMs old", async () => {
    let revoked: string[] = [];
    const { cache, calls } = cacheOver(5_000, async () => revoked);
    expect(await cache.isRevoked(ID, 0)).toBe(false);
    revoked = [ID];
    expect(await cache.isRevoked(ID, 4_999)).toBe(false);
    expect(calls()).toBe(1);
    expect(await cache.isRevoked(ID, 5_000)).toBe(true);
    expect(calls()).toBe(2);
  });

  it("shares one fetch between concurrent checks", async () => {
    const { cache, calls } = cacheOver(5_000, async () => [ID]);
    expect(await Promise.all([cache.isRevoked(ID, 0), cache.isRevoked("other", 0), cache.isRevoked(ID, 1)])).toEqual([true, false, true]);
    expect(calls()).toBe(1);
  });

  it("enforces a revocation this isolate made at once, even if a fetch older than it answers later", async () => {
    let release: (ids: string[]) => void = () => undefined;
    const { cache } = cacheOver(5_000, () => new Promise((resolve) => (release = resolve)));
    const stale = cache.isRevoked(ID, 0);
    cache.add(ID, 10);
    release([]);
    expect(await stale).toBe(true);
    // A list asked for after the revocation holds it; the local note is then dropped.
    const { cache: later } = cacheOver(5_000, async () => []);
    later.add(ID, 10);
    expect(await later.isRevoked(ID, 11)).toBe(false);
  });

  it("keeps the last list while the coordinator fails, asking again maxAgeMs later; without any list it throws", async () => {
    let fail = false;
    const { cache, calls } = cacheOver(1_000, async () => {
      if (fail) throw new Error("coordinator down");
      return [ID];
    });
    expect(await cache.isRevoked(ID, 0)).toBe(true);
    fail = true;
    expect(await cache.isRevoked(ID, 1_000)).toBe(true);
    expect(await cache.isRevoked(ID, 1_500)).toBe(true);
    expect(calls()).toBe(2);
    const { cache: cold } = cacheOver(1_000, async () => Promise.reject(new Error("coordinator down")));
    await expect(cold.isRevoked(ID, 0)).rejects.toThrow("coordinator down");
  });

  it("asks on every check when maxAgeMs is 0", async () => {
    const { cache, calls } = cacheOver(0, async () => []);
    await cache.isRevoked(ID, 0);
    await cache.isRevoked(ID, 0);
    expect(calls()).toBe(2);
  });
});
