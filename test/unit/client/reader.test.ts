/**
 * The client's reader: the SSE parser, results pages, and subscriptions that resume from
 * their cursor after the server ends a response, after a dropped connection and after a
 * 503, so every window arrives exactly once.
 */
import { describe, expect, it } from "vitest";
import { FluxClient } from "../../../shared/client/flux-client.ts";
import { SseParser } from "../../../shared/client/sse-parser.ts";
import type { FetchLike } from "../../../shared/client/runtime.ts";
import { defaultRuntime, opened } from "../../../client/runtime.ts";

const clientWith = (fetch: FetchLike) => new FluxClient({ url: "http://flux.test/", token: "t", runtime: defaultRuntime({ fetch, setTimer: (fn) => (queueMicrotask(fn), () => {}) }) });

describe("SseParser", () => {
  it("parses events split anywhere, with CRLF, comments and multi-line data", () => {
    const text = ": hello\r\nevent: window\r\nid: 1,0\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\nid: 2,0\r\nevent: window\ndata: x\n\n";
    for (let cut = 1; cut < text.length; cut++) {
      const parser = new SseParser();
      const out = [...parser.push(text.slice(0, cut)), ...parser.push(text.slice(cut))];
      expect(out, `cut at ${cut}`).toEqual([
        { event: "window", id: "1,0", data: '{"a":\n1}' },
        { event: "window", id: "2,0", data: "x" },
      ]);
    }
  });
});

describe("results pages", () => {
  it("follows next until the last page, passing each cursor as after", async () => {
    const seen: string[] = [];
    const pages: Record<string, { next: string | null; keys: string[] }> = {
      "": { next: "0:b", keys: ["a", "b"] },
      "0:b": { next: "10:a", keys: ["c"] },
      "10:a": { next: null, keys: ["d"] },
    };
    const client = clientWith(async (url) => {
      seen.push(url);
      const after = decodeURIComponent(/after=([^&]*)/.exec(url)?.[1] ?? "");
      const page = pages[after] ?? { next: null, keys: [] };
      const results = page.keys.map((key) => ({ key, windowStartMs: 0, windowEndMs: 10, values: { n: 1 }, closed: true }));
      return new Response(JSON.stringify({ dataflow: "df", results, next: page.next }));
    });
    const keys: string[] = [];
    for await (const page of client.results("df", { limit: 2, key: "k" })) keys.push(...page.results.map((r) => r.key));
    expect(keys).toEqual(["a", "b", "c", "d"]);
    expect(seen[0]).toBe("http://flux.test/v1/dataflows/df/results?key=k&limit=2");
    expect(seen[2]).toContain("after=10%3Aa");
  });
});

/** A subscribe endpoint over 10 windows of one partition; `plan` says how each connection ends. */
function subscribeServer(plan: ("end" | "drop" | "503")[]) {
  const cursors: (string | null)[] = [];
  const fetch: FetchLike = async (url) => {
    const cursor = /cursor=([^&]*)/.exec(url)?.[1] ?? null;
    cursors.push(cursor === null ? null : decodeURIComponent(cursor));
    const how = plan.shift() ?? "end";
    if (how === "503") return new Response('{"error":{"code":"UNAVAILABLE","message":"fail-over"}}', { status: 503, headers: { "retry-after": "0" } });
    const from = cursor === null ? 0 : Number(decodeURIComponent(cursor));
    const text = [from + 1, from + 2, from + 3]
      .filter((seq) => seq <= 10)
      .map((seq) => `event: window\nid: ${seq}\ndata: ${JSON.stringify({ partition: 0, outputSeq: seq, key: `k${seq}`, windowStartMs: seq * 10, windowEndMs: seq * 10 + 10, values: { n: seq } })}\n\n`)
      .join("");
    const bytes = new TextEncoder().encode(text);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        // Split mid-event; a dropped connection fails after the first part.
        controller.enqueue(bytes.slice(0, 70));
        if (how === "drop") return controller.error(new TypeError("connection reset"));
        controller.enqueue(bytes.slice(70));
        controller.close();
      },
    });
    return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
  };
  return { fetch, cursors };
}

describe("subscribe", () => {
  it("resumes from its cursor across ended responses, drops and 503s: every window once, in order", async () => {
    const server = subscribeServer(["end", "drop", "503", "end", "drop", "end", "end", "end", "end"]);
    const client = clientWith(server.fetch);
    const reconnects: string[] = [];
    const seqs: number[] = [];
    for await (const w of client.subscribe("df", { onReconnect: (e) => reconnects.push(e.code) })) {
      seqs.push(w.outputSeq);
      expect(w.cursor).toBe(String(w.outputSeq));
      if (w.outputSeq === 10) break;
    }
    expect(seqs).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(reconnects).toEqual(["NETWORK", "UNAVAILABLE", "NETWORK"]);
    expect(server.cursors[0]).toBeNull();
    // Each connection starts from the last cursor received before it.
    expect(server.cursors.slice(1, 4)).toEqual(["3", "3", "3"]);
  });

  it("waits between connections that end with nothing in them", async () => {
    const waits: number[] = [];
    let calls = 0;
    const fetch: FetchLike = async () => {
      calls++;
      const text = calls > 3 ? `event: window\nid: 1\ndata: ${JSON.stringify({ partition: 0, outputSeq: 1, key: "k", windowStartMs: 0, windowEndMs: 10, values: { n: 1 } })}\n\n` : "";
      return new Response(text, { status: 200, headers: { "content-type": "text/event-stream" } });
    };
    const client = new FluxClient({ url: "http://flux.test", token: "t", runtime: defaultRuntime({ fetch, random: () => 0.5, setTimer: (fn, ms) => (waits.push(ms), queueMicrotask(fn), () => {}) }) });
    for await (const w of client.subscribe("df")) {
      expect(w.outputSeq).toBe(1);
      break;
    }
    expect(calls).toBe(4);
    expect(waits).toEqual([125, 250, 500]);
  });

  it("asks over HTTP why a WebSocket failed before opening: a refusal is thrown, an answer that would stream reconnects", async () => {
    // Node's WebSocket after a refused handshake: an `error` event and no `close`.
    const failingSocket = () => {
      const handlers = new Map<string, () => void>();
      queueMicrotask(() => handlers.get("error")?.());
      return { addEventListener: (type: string, fn: () => void) => void handlers.set(type, fn), close: () => {} } as unknown as Parameters<typeof opened>[0];
    };
    const asked: string[] = [];
    let cancelled = 0;
    const answers = [
      () => new Response(new ReadableStream({ cancel: () => void cancelled++ }), { status: 200, headers: { "content-type": "text/event-stream" } }),
      () => new Response('{"error":{"code":"UNAUTHORIZED","message":"wrong bearer token"}}', { status: 401 }),
    ];
    const fetch: FetchLike = async (url, init) => {
      asked.push(`${init.method} ${url} ${init.headers.accept}`);
      return (answers.shift() ?? answers[1]!)();
    };
    const client = new FluxClient({
      url: "http://flux.test/",
      token: "t",
      runtime: defaultRuntime({ fetch, setTimer: (fn) => (queueMicrotask(fn), () => {}), openSocket: () => opened(failingSocket()) }),
    });
    const reconnects: string[] = [];
    const iterate = async () => {
      for await (const _ of client.subscribe("df", { transport: "websocket", onReconnect: (e) => reconnects.push(e.code) })) void _;
    };
    await expect(iterate()).rejects.toMatchObject({ status: 401, code: "UNAUTHORIZED", retryable: false });
    expect(reconnects).toEqual(["UNAVAILABLE"]);
    expect(cancelled).toBe(1);
    expect(asked).toEqual(["GET http://flux.test/v1/dataflows/df/subscribe?maxMs=60000 text/event-stream", "GET http://flux.test/v1/dataflows/df/subscribe?maxMs=60000 text/event-stream"]);
  });

  it("starts from a given cursor and throws refusals that reconnecting cannot fix", async () => {
    const client = clientWith(async () => new Response('{"error":{"code":"UNKNOWN_DATAFLOW","message":"no dataflow \'x\'"}}', { status: 404 }));
    const iterate = async () => {
      for await (const _ of client.subscribe("x", { cursor: "4" })) void _;
    };
    await expect(iterate()).rejects.toMatchObject({ status: 404, code: "UNKNOWN_DATAFLOW", retryable: false });
  });
});
