/**
 * Revoking one scoped token (issue 26): the revoked token gets 401 (`details.reason`
 * `revoked`) on ingest, read and subscribe while others go on; the router that revoked
 * refuses it at once, every other one within FLUX_REVOCATION_CACHE_MS; an open
 * subscription with it ends; a bad id, a body or another caller is refused and changes nothing.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../functions/app.ts";
import { ErrorEnvelopeSchema } from "../../shared/errors.ts";
import { RevokeTokenResponseSchema } from "../../shared/wire/tokens.ts";
import { call, createDataflow } from "../helpers/api.ts";
import { bearer, mint, sign } from "../helpers/tokens.ts";
import { openSubscription } from "../helpers/websocket.ts";

const ADMIN = bearer("test-admin-token");
const event = (ts: number) => [{ page: "home", ts, bytes: 1 }];
const revoke = (id: string, headers: Record<string, string> = ADMIN, body?: unknown) => call("POST", `/v1/admin/tokens/${id}/revoke`, body, headers);
const errorOf = async (res: Response) => ErrorEnvelopeSchema.parse(await res.json()).error;

/** What a token may do on a dataflow: post, read results, subscribe; each answer's status. */
async function statuses(token: string, id: string, stream: string, seq: number, app?: { app: ReturnType<typeof createApp>; env: Env }) {
  const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    app
      ? app.app.request(path, { method, headers: { ...bearer(token), ...headers, ...(body ? { "content-type": "application/json" } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) }, app.env)
      : call(method, path, body, { ...bearer(token), ...headers });
  const posted = await send("POST", `/v1/streams/${stream}/events`, event(seq), { "flux-producer-id": `p-${token.slice(-6)}`, "flux-seq": String(seq) });
  const read = await send("GET", `/v1/dataflows/${id}/results`);
  const subscribed = await send("GET", `/v1/dataflows/${id}/subscribe?maxMs=10`);
  await subscribed.body?.cancel();
  return [posted.status, read.status, subscribed.status];
}

describe("revoking a token", () => {
  it("refuses the revoked token with 401 on ingest, read and subscribe, and leaves the other working", async () => {
    const { id, stream } = await createDataflow({ partitions: 1 });
    const [kept, revoked] = [await mint({ scope: "admin", ttlSeconds: 600 }), await mint({ scope: "admin", ttlSeconds: 600 })];
    expect(kept.id).not.toBe(revoked.id);
    expect(await statuses(revoked.token, id, stream, 1)).toEqual([200, 200, 200]);
    const answer = RevokeTokenResponseSchema.parse(await (await revoke(revoked.id)).json());
    expect(answer).toMatchObject({ id: revoked.id, status: "revoked" });
    expect(answer.effectiveEverywhereAtMs - answer.revokedAtMs).toBe(5_000);
    // This isolate served the revocation: it refuses at once.
    expect(await statuses(revoked.token, id, stream, 2)).toEqual([401, 401, 401]);
    const refused = await errorOf(await call("GET", `/v1/dataflows/${id}/results`, undefined, bearer(revoked.token)));
    expect(refused).toMatchObject({ code: "UNAUTHORIZED", message: expect.stringContaining("was revoked"), details: { reason: "revoked", id: revoked.id } });
    expect(await statuses(kept.token, id, stream, 3)).toEqual([200, 200, 200]);
  });

  it("refuses a revoked read token in ?access_token= too", async () => {
    const { id } = await createDataflow({ partitions: 1 });
    const read = await mint({ scope: "read", dataflows: [id], ttlSeconds: 60 });
    expect((await revoke(read.id)).status).toBe(200);
    const res = await call("GET", `/v1/dataflows/${id}/subscribe?maxMs=10&access_token=${read.token}`, undefined, { authorization: "" });
    expect(res.status).toBe(401);
    expect((await errorOf(res)).details).toMatchObject({ reason: "revoked" });
  });

  it("is idempotent: a second revocation answers 200 already-revoked with the first one's time", async () => {
    const { id } = await mint({ scope: "admin", ttlSeconds: 60 });
    const first = RevokeTokenResponseSchema.parse(await (await revoke(id)).json());
    const again = await revoke(id);
    expect(again.status).toBe(200);
    expect(RevokeTokenResponseSchema.parse(await again.json())).toEqual({ ...first, status: "already-revoked" });
  });

  it("refuses an id that is not well-formed, or a body, with 400 INVALID_REQUEST, revoking nothing", async () => {
    const { id, token } = await mint({ scope: "admin", ttlSeconds: 60 });
    for (const bad of ["short", `${id}x`, `${id.slice(0, 15)}!`, `${id.slice(0, 15)}%2F`]) {
      const res = await revoke(bad);
      expect(res.status, bad).toBe(400);
      expect((await errorOf(res)).code).toBe("INVALID_REQUEST");
    }
    const withBody = await revoke(id, ADMIN, { expiresAtMs: 1 });
    expect(await errorOf(withBody)).toMatchObject({ code: "INVALID_REQUEST", message: expect.stringContaining("takes no body") });
    expect((await call("POST", `/v1/admin/tokens/${id}/revoke?now=1`, undefined, ADMIN)).status).toBe(400);
    expect((await call("GET", "/v1/status", undefined, bearer(token))).status).toBe(200);
  });

  it("is for FLUX_ADMIN_TOKEN only: the API token and signed tokens get 403, no token 401", async () => {
    const target = await mint({ scope: "admin", ttlSeconds: 60 });
    const signedAdmin = (await mint({ scope: "admin", ttlSeconds: 60 })).token;
    const read = (await mint({ scope: "read", dataflows: ["x"], ttlSeconds: 60 })).token;
    for (const token of ["test-token", signedAdmin, read]) {
      const res = await revoke(target.id, bearer(token));
      expect(res.status).toBe(403);
      expect((await errorOf(res)).code).toBe("FORBIDDEN");
    }
    expect((await revoke(target.id, { authorization: "" })).status).toBe(401);
    expect((await call("GET", "/v1/status", undefined, bearer(target.token))).status).toBe(200);
  });

  it("keeps accepting a token minted before ids existed (it cannot be revoked one by one)", async () => {
    const legacy = await sign({ v: 1, scope: "admin", expMs: Date.now() + 60_000 });
    expect((await call("GET", "/v1/status", undefined, bearer(legacy))).status).toBe(200);
  });
});

describe("other routers", () => {
  it("use their cached list until it is FLUX_REVOCATION_CACHE_MS old, then refuse", async () => {
    const { id, stream } = await createDataflow({ partitions: 1 });
    const token = await mint({ scope: "admin", ttlSeconds: 600 });
    const slow = { app: createApp(), env: { ...env, FLUX_REVOCATION_CACHE_MS: "60000" } };
    const quick = { app: createApp(), env: { ...env, FLUX_REVOCATION_CACHE_MS: "300" } };
    expect(await statuses(token.token, id, stream, 1, slow)).toEqual([200, 200, 200]);
    expect(await statuses(token.token, id, stream, 2, quick)).toEqual([200, 200, 200]);
    const revokedAt = Date.now();
    expect((await revoke(token.id)).status).toBe(200);
    // A list fetched a moment ago is trusted for a minute: no object call per request.
    expect(await statuses(token.token, id, stream, 3, slow)).toEqual([200, 200, 200]);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, revokedAt + 350 - Date.now())));
    expect(await statuses(token.token, id, stream, 4, quick)).toEqual([401, 401, 401]);
  });
});

describe("open subscriptions", () => {
  it("end a Server-Sent Events stream with a revoked event within the router's cache time and a poll", async () => {
    const { id } = await createDataflow({ partitions: 1 });
    const token = await mint({ scope: "read", dataflows: [id], ttlSeconds: 600 });
    const router = createApp();
    const res = await router.request(`/v1/dataflows/${id}/subscribe?maxMs=20000`, { headers: bearer(token.token) }, { ...env, FLUX_REVOCATION_CACHE_MS: "300" });
    expect(res.status).toBe(200);
    const text = res.text();
    const revokedAt = Date.now();
    expect((await revoke(token.id)).status).toBe(200);
    const body = await text;
    // 300 ms of cache and a 250 ms poll, with room for a slow machine; far below maxMs.
    expect(Date.now() - revokedAt).toBeLessThan(3_000);
    const data = /event: revoked\ndata: (.+)\n/.exec(body)?.[1];
    expect(ErrorEnvelopeSchema.parse(JSON.parse(data ?? "null")).error).toMatchObject({ code: "UNAUTHORIZED", details: { reason: "revoked", id: token.id } });
  });

  it("close a WebSocket with code 1008 at the next poll on the router that revoked", async () => {
    const { id } = await createDataflow({ partitions: 1 });
    const token = await mint({ scope: "read", dataflows: [id], ttlSeconds: 600 });
    const ws = await openSubscription(id, "?maxMs=20000", bearer(token.token));
    const closed = new Promise<{ code: number; reason: string; afterMs: number }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no close within 5 s")), 5_000);
      ws.addEventListener("close", (e) => (clearTimeout(timer), resolve({ code: e.code, reason: e.reason, afterMs: Date.now() - revokedAt })));
    });
    const revokedAt = Date.now();
    expect((await revoke(token.id)).status).toBe(200);
    const { code, reason, afterMs } = await closed;
    expect({ code, reason }).toEqual({ code: 1008, reason: "the token was revoked" });
    expect(afterMs).toBeLessThan(2_000);
  });
});
