/** Live subscription over a WebSocket (issue 6): the same feed as the SSE variant, one JSON message per closed window. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../functions/app.ts";
import { ErrorEnvelopeSchema } from "../../shared/errors.ts";
import { call, createDataflow, postEvents, results, subscribe } from "../helpers/api.ts";
import { MessageSchema, openSubscription, type Message } from "../helpers/websocket.ts";

type Window = Extract<Message, { type: "window" }>;

/**
 * Collects parsed messages until the server closes (or, with `stopAfter`, until that many
 * arrived; then the client closes). Fails after `deadlineMs`.
 */
function collect(ws: WebSocket, stopAfter = Number.POSITIVE_INFINITY, deadlineMs = 3_000): Promise<{ messages: Message[]; closeCode: number | null }> {
  return new Promise((resolve, reject) => {
    const messages: Message[] = [];
    const timer = setTimeout(() => reject(new Error(`no close within ${deadlineMs} ms; got ${messages.length} messages`)), deadlineMs);
    const finish = (closeCode: number | null) => {
      clearTimeout(timer);
      resolve({ messages, closeCode });
    };
    ws.addEventListener("message", (event) => {
      if (messages.length >= stopAfter) return;
      messages.push(MessageSchema.parse(JSON.parse(String(event.data))));
      if (messages.length === stopAfter) {
        ws.close(1000, "enough");
        finish(null);
      }
    });
    ws.addEventListener("close", (event) => finish(event.code));
  });
}

const windows = (messages: readonly Message[]) => messages.filter((m): m is Window => m.type === "window");
const windowName = (w: { key: string; windowStartMs: number }) => `${w.key}@${w.windowStartMs}`;
const errorCode = async (res: Response) => ErrorEnvelopeSchema.parse(await res.json()).error.code;

/** Posts one batch per second `from..to-1`, one event per page, each closing the previous second's windows. */
async function postSeconds(stream: string, pages: readonly string[], from: number, to: number): Promise<void> {
  for (let second = from; second < to; second++) {
    expect((await postEvents(stream, "p", second + 1, pages.map((page) => ({ page, ts: second * 1_000 + 10, bytes: second })))).status).toBe(200);
  }
}

/** Each window's cursor must be the previous cursor with only its own partition moved to its outputSeq. */
function expectCursorsFollow(messages: readonly Message[], start: number[]): void {
  const cursor = [...start];
  for (const m of windows(messages)) {
    cursor[m.partition] = m.outputSeq;
    expect(m.cursor).toBe(cursor.join(","));
  }
}

describe("subscribing over a WebSocket", () => {
  it("sends every closed window once, in output order, with the cursor after each, then ends", async () => {
    const { id, stream } = await createDataflow({ partitions: 3, window: { kind: "tumbling", sizeMs: 1_000 } });
    const pages = ["a", "b", "c", "d", "e", "f"];
    await postSeconds(stream, pages, 0, 5);
    // Last-Event-ID belongs to EventSource; on a WebSocket it must not move the start.
    const { messages, closeCode } = await collect(await openSubscription(id, "?maxMs=400", { "last-event-id": "9,9,9" }));

    const got = windows(messages);
    expect(got).toHaveLength(pages.length * 4);
    for (const partition of [0, 1, 2]) {
      const seqs = got.filter((w) => w.partition === partition).map((w) => w.outputSeq);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    }
    expectCursorsFollow(messages, [0, 0, 0]);
    expect(messages.at(-1)).toEqual({ type: "end", cursor: got.at(-1)?.cursor });
    expect(closeCode).toBe(1000);

    const closed = (await results(id)).filter((r) => r.closed);
    const byWindow = (r: { key: string; windowStartMs: number; windowEndMs: number; values: unknown }) => ({ key: r.key, windowStartMs: r.windowStartMs, windowEndMs: r.windowEndMs, values: r.values });
    const order = (a: { key: string; windowStartMs: number }, b: { key: string; windowStartMs: number }) => a.key.localeCompare(b.key) || a.windowStartMs - b.windowStartMs;
    expect(got.map(byWindow).sort(order)).toEqual(closed.map(byWindow).sort(order));

    // The same events, ids and data as the SSE variant.
    const sse = await subscribe(id, 300);
    expect(got.map(({ type: _type, cursor, ...data }) => ({ id: cursor, data }))).toEqual(sse);
  });

  it("resumes from the last cursor received, with no gap and no repeat", async () => {
    const { id, stream } = await createDataflow({ partitions: 2, window: { kind: "tumbling", sizeMs: 1_000 } });
    const pages = ["a", "b", "c", "d", "e"];
    await postSeconds(stream, pages, 0, 4);

    // The client hangs up after five windows and reconnects from the fifth one's cursor.
    const first = await collect(await openSubscription(id, "?maxMs=5000"), 5);
    expect(windows(first.messages)).toHaveLength(5);
    const cut = first.messages.at(-1)?.cursor ?? "";
    const second = await collect(await openSubscription(id, `?maxMs=400&cursor=${cut}`));
    expectCursorsFollow(second.messages, cut.split(",").map(Number));
    expect(windows(second.messages).length).toBeGreaterThan(0);

    // New windows close while nobody listens; the end cursor picks up exactly those.
    await postSeconds(stream, pages, 4, 6);
    const resume = second.messages.at(-1);
    expect(resume?.type).toBe("end");
    const third = await collect(await openSubscription(id, `?maxMs=400&cursor=${resume?.cursor ?? ""}`));
    expect(windows(third.messages).length).toBe(pages.length * 2);

    const seen = windows([...first.messages, ...second.messages, ...third.messages]);
    expect(new Set(seen.map((w) => `${w.partition}:${w.outputSeq}`)).size).toBe(seen.length);
    const closed = (await results(id)).filter((r) => r.closed).map(windowName);
    expect(closed).toHaveLength(pages.length * 5);
    expect(seen.map(windowName).sort()).toEqual(closed.sort());
  });

  it("sends an end message with the unchanged cursor and closes with 1000 once maxMs has passed", async () => {
    const { id } = await createDataflow({ partitions: 2 });
    const startedAt = Date.now();
    const { messages, closeCode } = await collect(await openSubscription(id, "?maxMs=300&cursor=3,4"));
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(300);
    expect(messages).toEqual([{ type: "end", cursor: "3,4" }]);
    expect(closeCode).toBe(1000);
  });

  it("answers a bad request with the JSON error envelope instead of upgrading", async () => {
    const { id } = await createDataflow({ partitions: 2 });
    const ws = { upgrade: "websocket" };
    const partitions = await call("GET", `/v1/dataflows/${id}/subscribe?cursor=1,2,3&maxMs=10`, undefined, ws);
    expect(partitions.status).toBe(400);
    expect(partitions.webSocket).toBeNull();
    expect(await partitions.json()).toMatchInlineSnapshot(`
      {
        "error": {
          "code": "INVALID_REQUEST",
          "message": "the cursor names more partitions than dataflow '${id}' has (2): it must have one number per partition",
        },
      }
    `);
    const malformed = await call("GET", `/v1/dataflows/${id}/subscribe?cursor=x&maxMs=10`, undefined, ws);
    expect(malformed.status).toBe(400);
    expect(await errorCode(malformed)).toBe("INVALID_REQUEST");
    const unknown = await call("GET", "/v1/dataflows/nope/subscribe?maxMs=10", undefined, ws);
    expect(unknown.status).toBe(404);
    expect(await errorCode(unknown)).toBe("UNKNOWN_DATAFLOW");
    const anonymous = await call("GET", `/v1/dataflows/${id}/subscribe?maxMs=10`, undefined, { ...ws, authorization: "" });
    expect(anonymous.status).toBe(401);
    expect(anonymous.webSocket).toBeNull();
  });

  it("refuses an upgrade that is not a GET", async () => {
    // In-process: workerd turns any request carrying `Upgrade: websocket` into a GET before
    // the Worker sees it, so only the app itself can be handed a HEAD upgrade (which Hono
    // routes to GET handlers).
    const { id } = await createDataflow({ partitions: 2 });
    const init = { method: "HEAD", headers: { upgrade: "websocket", authorization: "Bearer test-token" } };
    const head = await createApp().request(`/v1/dataflows/${id}/subscribe?maxMs=10`, init, env);
    expect(head.status).toBe(400);
    expect(head.webSocket).toBeNull();
    const post = await createApp().request(`/v1/dataflows/${id}/subscribe?maxMs=10`, { ...init, method: "POST" }, env);
    expect(await errorCode(post)).toBe("NOT_FOUND");
  });
});
