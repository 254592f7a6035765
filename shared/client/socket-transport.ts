/**
 * One WebSocket connection of a subscription: `window` messages, then `end` and close
 * code 1000 when the server's `maxMs` is up. Any other close is a retryable disconnect.
 * A socket that fails before opening does not say why (the WebSocket API hides a refused
 * handshake's status), so the same request is made once over HTTP: a refusal (400, 401,
 * 403, 404) is thrown as such; an answer that would stream leaves the failure retryable.
 */
import { FluxClientError } from "./client-error.ts";
import type { HttpClient } from "./http.ts";
import { parseJson, subscribePath, type Frame } from "./subscription-frame.ts";
import { SubscriptionMessageSchema } from "../wire/subscription.ts";
import type { SocketLike } from "./runtime.ts";

type Item = { text: string } | { closed: number; reason: string };

/** Streams the windows after `cursor` until the server sends `end` or the socket closes. */
export async function* socketFrames(http: HttpClient, dataflow: string, cursor: string | undefined, maxMs: number): AsyncGenerator<Frame> {
  const open = http.runtime.openSocket;
  if (!open) throw new Error("this runtime has no WebSocket; subscribe with transport 'sse'");
  let socket: SocketLike;
  try {
    socket = await open(http.url(subscribePath(dataflow), { cursor, maxMs }), http.token("api") ?? "");
  } catch (err) {
    if (err instanceof FluxClientError && err.retryable) await whyNotOpened(http, dataflow, cursor, maxMs);
    throw err;
  }
  const items: Item[] = [];
  let wake: (() => void) | null = null;
  const push = (item: Item) => {
    items.push(item);
    wake?.();
  };
  socket.onMessage((text) => push({ text }));
  socket.onClose((closed, reason) => push({ closed, reason }));
  try {
    for (;;) {
      const item = items.shift() ?? (await new Promise<void>((resolve) => (wake = resolve)).then(() => items.shift()));
      wake = null;
      if (!item) continue;
      if ("closed" in item) throw new FluxClientError(0, "DISCONNECTED", `the subscription socket closed (${item.closed} ${item.reason})`);
      const parsed = SubscriptionMessageSchema.safeParse(parseJson(item.text));
      if (!parsed.success) throw new FluxClientError(200, "BAD_RESPONSE", `a subscription message does not fit the API: ${parsed.error.message.slice(0, 200)}`);
      const message = parsed.data;
      if (message.type === "end") return yield { type: "end", cursor: message.cursor };
      const { type: _type, ...window } = message;
      yield { type: "window", cursor: message.cursor, window };
    }
  } finally {
    socket.close(1000, "done");
  }
}

/** Makes the subscription request over HTTP: throws the server's refusal; returns (having cancelled the stream) if it would stream. */
async function whyNotOpened(http: HttpClient, dataflow: string, cursor: string | undefined, maxMs: number): Promise<void> {
  const res = await http.send("GET", subscribePath(dataflow), { query: { cursor, maxMs }, headers: { accept: "text/event-stream" } });
  await res.body?.getReader().cancel().catch(() => undefined);
}
