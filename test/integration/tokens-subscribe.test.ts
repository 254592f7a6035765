/**
 * Browser-style subscription with a scoped token (issue 13): a read token in `?access_token=`
 * (EventSource) or a `flux-token.<token>` WebSocket subprotocol; long-lived tokens never there.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { createApp } from "../../functions/app.ts";
import { ErrorEnvelopeSchema } from "../../shared/errors.ts";
import { call, createDataflow, postEvents } from "../helpers/api.ts";
import { mint } from "../helpers/tokens.ts";
import { MessageSchema } from "../helpers/websocket.ts";

const code = async (res: Response) => ErrorEnvelopeSchema.parse(await res.json()).error.code;

/** A one-partition dataflow with two closed windows (a, b in [0,1s)) and a read token for it. */
async function closedWindows() {
  const { id, stream } = await createDataflow({ partitions: 1, window: { kind: "tumbling", sizeMs: 1_000 } });
  expect((await postEvents(stream, "p", 1, [{ page: "a", ts: 10, bytes: 1 }, { page: "b", ts: 20, bytes: 2 }])).status).toBe(200);
  expect((await postEvents(stream, "p", 2, [{ page: "a", ts: 1_500, bytes: 1 }])).status).toBe(200);
  const { token } = await mint({ scope: "read", dataflows: [id], ttlSeconds: 60 });
  return { id, token };
}

describe("subscribing with a scoped token", () => {
  it("streams Server-Sent Events to a read token in ?access_token=, without any Authorization header", async () => {
    const { id, token } = await closedWindows();
    const res = await call("GET", `/v1/dataflows/${id}/subscribe?maxMs=200&access_token=${token}`, undefined, { authorization: "" });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text.match(/event: window/g)).toHaveLength(2);
    expect(text).not.toContain(token);
  });

  it("ends a stream when its token expires, before maxMs; the reconnect gets 401", async () => {
    const { id } = await closedWindows();
    const { token } = await mint({ scope: "read", dataflows: [id], ttlSeconds: 1 });
    const started = Date.now();
    const res = await call("GET", `/v1/dataflows/${id}/subscribe?maxMs=20000&access_token=${token}`, undefined, { authorization: "" });
    expect(res.status).toBe(200);
    expect((await res.text()).match(/event: window/g)).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(5_000);
    const again = await call("GET", `/v1/dataflows/${id}/subscribe?maxMs=200&access_token=${token}`, undefined, { authorization: "" });
    expect(again.status).toBe(401);
  }, 20_000);

  it("opens a WebSocket for a read token in the flux-token subprotocol and selects flux.v1", async () => {
    const { id, token } = await closedWindows();
    const res = await call("GET", `/v1/dataflows/${id}/subscribe?maxMs=200`, undefined, {
      authorization: "",
      upgrade: "websocket",
      "sec-websocket-protocol": `flux.v1, flux-token.${token}`,
    });
    expect(res.status).toBe(101);
    expect(res.headers.get("sec-websocket-protocol")).toBe("flux.v1");
    const ws = res.webSocket;
    if (!ws) throw new Error("a 101 response without a WebSocket");
    ws.accept();
    const messages = await new Promise<unknown[]>((resolve, reject) => {
      const got: unknown[] = [];
      const timer = setTimeout(() => reject(new Error(`no close within 3 s; got ${got.length}`)), 3_000);
      ws.addEventListener("message", (e) => got.push(MessageSchema.parse(JSON.parse(String(e.data)))));
      ws.addEventListener("close", () => (clearTimeout(timer), resolve(got)));
    });
    expect(messages.map((m) => (m as { type: string }).type)).toEqual(["window", "window", "end"]);
  });

  it("never accepts a long-lived token in the URL or a subprotocol", async () => {
    const { id } = await closedWindows();
    for (const token of ["test-token", "test-admin-token"]) {
      const viaUrl = await call("GET", `/v1/dataflows/${id}/subscribe?maxMs=10&access_token=${token}`, undefined, { authorization: "" });
      expect(viaUrl.status).toBe(401);
      expect(await viaUrl.text()).not.toContain(token);
      const viaProtocol = await call("GET", `/v1/dataflows/${id}/subscribe?maxMs=10`, undefined, { authorization: "", upgrade: "websocket", "sec-websocket-protocol": `flux.v1, flux-token.${token}` });
      expect(viaProtocol.status).toBe(401);
    }
  });

  it("refuses other scopes and other dataflows there with 403, and other routes' access_token with 400", async () => {
    const { id } = await closedWindows();
    const ingest = (await mint({ scope: "ingest", streams: ["s"], ttlSeconds: 60 })).token;
    const admin = (await mint({ scope: "admin", ttlSeconds: 60 })).token;
    const otherRead = (await mint({ scope: "read", dataflows: ["other"], ttlSeconds: 60 })).token;
    for (const token of [ingest, admin, otherRead]) {
      const res = await call("GET", `/v1/dataflows/${id}/subscribe?maxMs=10&access_token=${token}`, undefined, { authorization: "" });
      expect(res.status).toBe(403);
      expect(await code(res)).toBe("FORBIDDEN");
    }
    const read = (await mint({ scope: "read", dataflows: [id], ttlSeconds: 60 })).token;
    for (const authorization of ["", "Bearer test-token"]) {
      const results = await call("GET", `/v1/dataflows/${id}/results?access_token=${read}`, undefined, { authorization });
      expect(results.status).toBe(400);
    }
    const noV1 = await call("GET", `/v1/dataflows/${id}/subscribe?maxMs=10`, undefined, { authorization: "", upgrade: "websocket", "sec-websocket-protocol": `flux-token.${read}` });
    expect(noV1.status).toBe(400);
  });

  it("keeps the token out of the Worker's log when a request with it fails", async () => {
    const { id, token } = await closedWindows();
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      // An invalid configuration makes every request a logged 500.
      const res = await createApp().request(`/v1/dataflows/${id}/subscribe?access_token=${token}`, {}, { ...env, FLUX_MAX_BODY_BYTES: "lots" });
      expect(res.status).toBe(500);
      expect(logged).toHaveBeenCalled();
      const text = JSON.stringify(logged.mock.calls);
      expect(text).toContain(`/v1/dataflows/${id}/subscribe`);
      expect(text).not.toContain(token.split(".")[2]);
    } finally {
      logged.mockRestore();
    }
  });
});
