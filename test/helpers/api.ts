/** Helpers for calling the Worker through `exports.default.fetch` in workerd tests. */
import { exports } from "cloudflare:workers";

export const TOKEN = "test-token";

/** Calls the Worker with the test bearer token unless `headers.authorization` is given. */
export async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  const init: RequestInit = { method, headers: { authorization: `Bearer ${TOKEN}`, ...headers } };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)["content-type"] ??= "application/json";
  }
  return exports.default.fetch(new Request(`https://flux.test${path}`, init));
}

/** Posts events with producer headers. */
export function postEvents(stream: string, producer: string, seq: number, events: unknown, extra: Record<string, string> = {}) {
  return call("POST", `/v1/streams/${stream}/events`, events, { "flux-producer-id": producer, "flux-seq": String(seq), ...extra });
}

let counter = 0;
/** A name unique within this test file (storage is isolated per file). */
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}-${counter}`;
}
