/**
 * `GET /v1/dataflows/{id}/subscribe`: closed windows from a cursor, as Server-Sent Events
 * or, with `Upgrade: websocket`, as WebSocket text messages. Both transports run the one
 * feed in `result-feed.ts`, so resuming from the last cursor received gives no gap and no
 * repeat on either. Validation fails with the usual JSON error before any upgrade. A feed
 * opened with a signed token that is then revoked ends with a `revoked` event (SSE) or
 * close code 1008 (WebSocket) within FLUX_REVOCATION_CACHE_MS and one poll (issue 26).
 */
import { Hono, type Context } from "hono";
import { streamSSE } from "hono/streaming";
import { zValidator } from "@hono/zod-validator";
import { z } from "zod";
import { FluxError } from "../../shared/errors.ts";
import { NameSchema } from "../../shared/wire/dataflow-spec.ts";
import { CursorTextSchema, parseCursor, SubscribeQuerySchema, type SubscriptionMessage } from "../../shared/wire/subscription.ts";
import type { AppEnv } from "../app-env.ts";
import { revocationCheck, SUBPROTOCOL, tokenRevoked } from "../auth.ts";
import { readableDataflow, reportFailure } from "../cluster.ts";
import { onInvalid } from "../http-errors.ts";
import { runResultFeed, type FeedStart } from "../result-feed.ts";


export const subscribeRoutes = new Hono<AppEnv>().get(
  "/:id/subscribe",
  zValidator("param", z.object({ id: NameSchema }), onInvalid),
  zValidator("query", SubscribeQuerySchema, onInvalid),
  async (c) => {
    const { id } = c.req.valid("param");
    const { cursor: fromQuery, maxMs = 60_000 } = c.req.valid("query");
    const webSocket = c.req.header("upgrade")?.toLowerCase() === "websocket";
    // Hono also routes HEAD here, and a HEAD response cannot carry the upgrade.
    if (webSocket && c.req.method !== "GET") throw new FluxError("INVALID_REQUEST", `a WebSocket upgrade must be a GET, not ${c.req.method}`);
    const readable = await readableDataflow(c.env, c.var.config, c.var.dataflowCache, id);
    let { record } = readable;
    // Only a reconnecting EventSource sends Last-Event-ID; a WebSocket resumes from ?cursor=.
    const text = webSocket ? fromQuery : (c.req.header("last-event-id") ?? fromQuery);
    if (text !== undefined && !CursorTextSchema.safeParse(text).success) throw new FluxError("INVALID_REQUEST", "the cursor must look like 0,12,3");
    let cursor = parseCursor(text, record.spec.partitions);
    // A cursor naming more partitions than a cached record knows may come from after the dataflow grew: ask its monitor.
    if (!cursor && readable.cached) {
      ({ record } = await readableDataflow(c.env, c.var.config, c.var.dataflowCache, id, true));
      cursor = parseCursor(text, record.spec.partitions);
    }
    if (!cursor) throw new FluxError("INVALID_REQUEST", `the cursor names more partitions than dataflow '${id}' has (${record.spec.partitions}): it must have one number per partition`);
    const revocation = revocationCheck(c);
    // A signed token's feed ends when the token expires, as if maxMs had passed: the client's reconnect then gets the 401.
    const principal = c.var.principal;
    const expiresAtMs = principal.kind === "scoped" ? principal.claims.expMs : Number.POSITIVE_INFINITY;
    const start = (): FeedStart => ({
      dataflow: id,
      routes: record.routes,
      cursor,
      replicaTimeoutMs: c.var.config.replicaTimeoutMs,
      endAt: Math.min(Date.now() + maxMs, expiresAtMs),
      ...(revocation ? { isRevoked: revocation.isRevoked } : {}),
      // The feed runs while the request lasts: a report needs no waitUntil of its own.
      report: (replica) => reportFailure(c.env, (p) => void p, [id], replica),
    });
    return webSocket ? streamWebSocket(c, start) : streamEvents(c, start, revocation?.id);
  },
);

/**
 * Server-Sent Events: one `window` event per result, its id the cursor after it; a revoked
 * token's stream ends with one `revoked` event whose data is the 401 error envelope.
 */
function streamEvents(c: Context<AppEnv>, start: () => FeedStart, tokenId: string | undefined): Response {
  const env = c.env;
  return streamSSE(c, async (stream) => {
    const end = await runResultFeed(env, start(), {
      send: (event, cursorText) => stream.writeSSE({ id: cursorText, event: "window", data: JSON.stringify(event) }),
      isAborted: () => stream.aborted,
      sleep: (ms) => stream.sleep(ms),
    });
    if (end.revoked && tokenId !== undefined && !stream.aborted) await stream.writeSSE({ event: "revoked", data: JSON.stringify(tokenRevoked(tokenId).toEnvelope()) });
  });
}

/**
 * WebSocket: one `window` message per result, then an `end` message and close code 1000
 * when the time is up, or (no `end`) close code 1008 when its token was revoked. A client
 * that closes stops the feed at its next check.
 */
function streamWebSocket(c: Context<AppEnv>, start: () => FeedStart): Response {
  const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
  server.accept();
  let gone = false;
  server.addEventListener("close", () => {
    gone = true;
  });
  server.addEventListener("error", () => {
    gone = true;
  });
  const send = (message: SubscriptionMessage) => {
    if (gone) return;
    try {
      server.send(JSON.stringify(message));
    } catch {
      gone = true; // closed between our check and the send: the client is gone
    }
  };
  const feed = runResultFeed(c.env, start(), {
    send: async (event, cursorText) => send({ type: "window", cursor: cursorText, ...event }),
    isAborted: () => gone,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  }).then(
    ({ cursorText, revoked }) => {
      if (revoked) {
        if (!gone) server.close(1008, "the token was revoked");
        return;
      }
      send({ type: "end", cursor: cursorText });
      if (!gone) server.close(1000, "maxMs reached; reconnect with the cursor");
    },
    (err: unknown) => {
      console.error("subscription feed failed", { path: c.req.path, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      if (!gone) server.close(1011, "internal error");
    },
  );
  // The feed outlives the 101 response.
  c.executionCtx.waitUntil(feed);
  // A browser offering subprotocols (flux.v1 beside its flux-token.<token>) fails the handshake unless one is selected.
  const offered = (c.req.header("sec-websocket-protocol") ?? "").split(",").map((p) => p.trim());
  const headers: Record<string, string> = offered.includes(SUBPROTOCOL) ? { "sec-websocket-protocol": SUBPROTOCOL } : {};
  return new Response(null, { status: 101, webSocket: client, headers });
}
