/**
 * One Server-Sent Events connection of a subscription, read through `fetch` streaming
 * (so it can send the bearer header, which `EventSource` cannot). Ends when the server
 * ends the response; a dropped connection is a retryable network error.
 */
import { FluxClientError, networkError } from "./client-error.ts";
import type { HttpClient } from "./http.ts";
import { SseParser } from "./sse-parser.ts";
import { parseJson, subscribePath, type Frame } from "./subscription-frame.ts";
import { SubscriptionEventSchema } from "../wire/subscription.ts";

/** Streams the windows after `cursor` until the server ends the response. */
export async function* sseFrames(http: HttpClient, dataflow: string, cursor: string | undefined, maxMs: number): AsyncGenerator<Frame> {
  const path = subscribePath(dataflow);
  const res = await http.send("GET", path, { query: { cursor, maxMs }, headers: { accept: "text/event-stream" } });
  if (!res.body) throw new FluxClientError(res.status, "BAD_RESPONSE", "the subscription answer has no body");
  const reader = res.body.getReader();
  const decode = http.runtime.utf8Decoder();
  const parser = new SseParser();
  try {
    for (;;) {
      let chunk: { done: boolean; value?: Uint8Array };
      try {
        chunk = await reader.read();
      } catch (err) {
        throw networkError(http.url(path), err);
      }
      if (chunk.done) return;
      for (const message of parser.push(chunk.value ? decode(chunk.value) : "")) {
        if (message.event !== "window" || message.id === null) continue;
        const parsed = SubscriptionEventSchema.safeParse(parseJson(message.data));
        if (!parsed.success) throw new FluxClientError(res.status, "BAD_RESPONSE", `a window event does not fit the API: ${parsed.error.message.slice(0, 200)}`);
        yield { type: "window", cursor: message.id, window: { ...parsed.data, cursor: message.id } };
      }
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}
