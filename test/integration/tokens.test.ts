/** Scoped, expiring tokens in workerd (issue 13): minting, scope, expiry, tampering and rotation. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../functions/app.ts";
import { hmacSha256 } from "../../functions/token-crypto.ts";
import { ErrorEnvelopeSchema } from "../../shared/errors.ts";
import { verifyToken } from "../../shared/tokens/signed-token.ts";
import { MAX_TOKEN_TTL_SECONDS, type TokenClaims } from "../../shared/wire/tokens.ts";
import { call, createDataflow, postEvents } from "../helpers/api.ts";
import { bearer, mint, NEW_SECRET, OLD_SECRET, sign } from "../helpers/tokens.ts";

const code = async (res: Response) => ErrorEnvelopeSchema.parse(await res.json()).error.code;
const event = (ts: number) => [{ page: "home", ts, bytes: 1 }];

describe("minting tokens", () => {
  it("answers a token signed by the first secret, expiring after the ttl", async () => {
    const before = Date.now();
    const { token, expiresAtMs } = await mint({ scope: "read", dataflows: ["x"], ttlSeconds: 60 });
    expect(expiresAtMs).toBeGreaterThanOrEqual(before + 60_000);
    expect(expiresAtMs).toBeLessThanOrEqual(Date.now() + 60_000);
    expect(await verifyToken(token, [NEW_SECRET], Date.now(), hmacSha256)).toMatchObject({ ok: true, claims: { scope: "read", dataflows: ["x"], expMs: expiresAtMs } });
    expect((await verifyToken(token, [OLD_SECRET], Date.now(), hmacSha256)).ok).toBe(false);
  });

  it.each([
    ["an unknown scope", { scope: "write", ttlSeconds: 60 }],
    ["no ttl", { scope: "admin" }],
    ["a ttl of 0", { scope: "admin", ttlSeconds: 0 }],
    ["a ttl above the bound", { scope: "admin", ttlSeconds: MAX_TOKEN_TTL_SECONDS + 1 }],
    ["a fractional ttl", { scope: "admin", ttlSeconds: 1.5 }],
    ["ingest without streams", { scope: "ingest", ttlSeconds: 60 }],
    ["ingest with an empty list", { scope: "ingest", streams: [], ttlSeconds: 60 }],
    ["ingest naming dataflows", { scope: "ingest", streams: ["s"], dataflows: ["d"], ttlSeconds: 60 }],
    ["read naming streams", { scope: "read", streams: ["s"], ttlSeconds: 60 }],
    ["admin naming dataflows", { scope: "admin", dataflows: ["d"], ttlSeconds: 60 }],
    ["a bad name", { scope: "read", dataflows: ["a/b"], ttlSeconds: 60 }],
    ["a dataflow named twice", { scope: "read", dataflows: ["d", "e", "d"], ttlSeconds: 60 }],
    ["a stream named twice", { scope: "ingest", streams: ["s", "s"], ttlSeconds: 60 }],
    ["an unknown field", { scope: "admin", ttlSeconds: 60, note: "x" }],
  ])("refuses %s with 400 INVALID_REQUEST", async (_name, body) => {
    const res = await call("POST", "/v1/admin/tokens", body, bearer("test-admin-token"));
    expect(res.status).toBe(400);
    expect(await code(res)).toBe("INVALID_REQUEST");
  });

  it("mints only for FLUX_ADMIN_TOKEN: the API token and signed admin tokens get 403, no token 401", async () => {
    const signedAdmin = (await mint({ scope: "admin", ttlSeconds: 60 })).token;
    for (const token of ["test-token", signedAdmin]) {
      const res = await call("POST", "/v1/admin/tokens", { scope: "admin", ttlSeconds: 60 }, bearer(token));
      expect(res.status).toBe(403);
      expect(await code(res)).toBe("FORBIDDEN");
    }
    expect((await call("POST", "/v1/admin/tokens", { scope: "admin", ttlSeconds: 60 }, { authorization: "" })).status).toBe(401);
  });

  it("answers 503 NOT_CONFIGURED without usable secrets, naming none", async () => {
    for (const secrets of ["", "too-short"]) {
      const res = await createApp().request("/v1/admin/tokens", { method: "POST", headers: { ...bearer("test-admin-token"), "content-type": "application/json" }, body: JSON.stringify({ scope: "admin", ttlSeconds: 60 }) }, { ...env, FLUX_TOKEN_SECRETS: secrets });
      expect(res.status).toBe(503);
      const text = await res.text();
      expect(text).toContain("NOT_CONFIGURED");
      expect(text).not.toContain("too-short");
    }
  });
});

describe("scoped tokens", () => {
  it("an ingest token posts only into its streams", async () => {
    const mine = await createDataflow();
    const other = await createDataflow();
    const { token } = await mint({ scope: "ingest", streams: [mine.stream], ttlSeconds: 60 });
    expect((await postEvents(mine.stream, "p", 1, event(1), bearer(token))).status).toBe(200);
    const refused = await postEvents(other.stream, "p", 1, event(1), bearer(token));
    expect(refused.status).toBe(403);
    expect(ErrorEnvelopeSchema.parse(await refused.json()).error).toMatchObject({ code: "FORBIDDEN", message: expect.stringContaining(mine.stream) });
    for (const [method, path] of [["GET", "/v1/status"], ["GET", `/v1/dataflows/${mine.id}/results`], ["GET", "/v1/dataflows"], ["DELETE", `/v1/dataflows/${mine.id}`]] as const) {
      expect((await call(method, path, undefined, bearer(token))).status, `${method} ${path}`).toBe(403);
    }
  });

  it("a read token reads only its dataflows, and the status shows only those", async () => {
    const mine = await createDataflow();
    const other = await createDataflow();
    const { token } = await mint({ scope: "read", dataflows: [mine.id], ttlSeconds: 60 });
    expect((await call("GET", `/v1/dataflows/${mine.id}/results`, undefined, bearer(token))).status).toBe(200);
    expect((await call("GET", `/v1/dataflows/${mine.id}`, undefined, bearer(token))).status).toBe(200);
    expect((await call("GET", `/v1/dataflows/${other.id}/results`, undefined, bearer(token))).status).toBe(403);
    const status = (await (await call("GET", "/v1/status", undefined, bearer(token))).json()) as { dataflows: { id: string }[] };
    expect(status.dataflows.map((d) => d.id)).toEqual([mine.id]);
    expect((await postEvents(mine.stream, "p", 1, event(1), bearer(token))).status).toBe(403);
    expect((await call("PUT", `/v1/dataflows/${mine.id}`, {}, bearer(token))).status).toBe(403);
  });

  it("a signed admin token may do what the admin token does, except mint", async () => {
    const { token } = await mint({ scope: "admin", ttlSeconds: 60 });
    const { id, stream } = await createDataflow();
    expect((await postEvents(stream, "p", 1, event(1), bearer(token))).status).toBe(200);
    expect((await call("GET", `/v1/dataflows/${id}/results`, undefined, bearer(token))).status).toBe(200);
    expect((await call("GET", "/v1/status", undefined, bearer("test-admin-token"))).status).toBe(200);
  });

  it("refuses an expired token with 401, from its expiry on", async () => {
    const { id } = await createDataflow();
    const token = await sign({ v: 1, scope: "read", dataflows: [id], expMs: Date.now() - 1 });
    const res = await call("GET", `/v1/dataflows/${id}/results`, undefined, bearer(token));
    expect(res.status).toBe(401);
    expect(ErrorEnvelopeSchema.parse(await res.json()).error).toMatchObject({ code: "UNAUTHORIZED", message: expect.stringContaining("expired") });
  });

  it("refuses a tampered token with 401, without echoing it", async () => {
    const { id } = await createDataflow();
    const { token } = await mint({ scope: "read", dataflows: [id], ttlSeconds: 60 });
    const [prefix, body = "", signature = ""] = token.split(".");
    const widened = btoa(atob(body.replace(/-/g, "+").replace(/_/g, "/")).replace(`"${id}"`, '"*"')).replace(/=+$/, "");
    for (const tampered of [`${prefix}.${widened}.${signature}`, `${prefix}.${body}.${signature.slice(0, -2)}AA`]) {
      const res = await call("GET", `/v1/dataflows/${id}/results`, undefined, bearer(tampered));
      expect(res.status).toBe(401);
      expect(await res.text()).not.toContain(signature.slice(0, 20));
    }
  });

  it("accepts tokens of the second secret during a rotation and refuses any other secret", async () => {
    const { id } = await createDataflow();
    const claims: TokenClaims = { v: 1, scope: "read", dataflows: [id], expMs: Date.now() + 60_000 };
    expect((await call("GET", `/v1/dataflows/${id}/results`, undefined, bearer(await sign(claims, OLD_SECRET)))).status).toBe(200);
    expect((await call("GET", `/v1/dataflows/${id}/results`, undefined, bearer(await sign(claims, "retired-secret-0123456789abcdef0123")))).status).toBe(401);
    // After the rotation: only the new secret configured, the old one's tokens stop working.
    const rotated = { ...env, FLUX_TOKEN_SECRETS: NEW_SECRET };
    const path = `/v1/dataflows/${id}/results`;
    expect((await createApp().request(path, { headers: bearer(await sign(claims, OLD_SECRET)) }, rotated)).status).toBe(401);
    expect((await createApp().request(path, { headers: bearer(await sign(claims, NEW_SECRET)) }, rotated)).status).toBe(200);
  });
});
