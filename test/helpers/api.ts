/** Helpers for calling the Worker through `exports.default.fetch` in workerd tests. */
import { exports } from "cloudflare:workers";

const TOKEN = "test-token";

/** Calls the Worker with the test bearer token unless `headers.authorization` is given. */
/** One request to the Worker, with the API token unless `headers` replace it (a `null` header is left out). */
export async function call(method: string, path: string, body?: unknown, headers: Record<string, string | null> = {}): Promise<Response> {
  const merged: Record<string, string | null> = { authorization: `Bearer ${TOKEN}`, ...headers };
  const init: RequestInit = { method, headers: Object.fromEntries(Object.entries(merged).filter((e): e is [string, string] => e[1] !== null)) };
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

/** A spec like the README's, with overrides. */
export function clicksSpec(stream: string, overrides: Record<string, unknown> = {}) {
  return {
    stream,
    key: "page",
    timeField: "ts",
    window: { kind: "tumbling", sizeMs: 10_000 },
    aggregates: { n: { op: "count" }, bytes: { op: "sum", field: "bytes" }, lo: { op: "min", field: "bytes" }, hi: { op: "max", field: "bytes" }, mean: { op: "avg", field: "bytes" } },
    partitions: 4,
    replication: 2,
    ...overrides,
  };
}

/** Creates a dataflow on a fresh stream and returns both names. */
export async function createDataflow(overrides: Record<string, unknown> = {}): Promise<{ id: string; stream: string }> {
  const id = uniqueName("df");
  const stream = uniqueName("clicks");
  const res = await call("PUT", `/v1/dataflows/${id}`, clicksSpec(stream, overrides));
  if (res.status !== 201) throw new Error(`PUT dataflow: ${res.status} ${await res.text()}`);
  return { id, stream };
}

/** Window results of a dataflow (all keys unless `query` narrows them). */
export async function results(id: string, query = ""): Promise<{ key: string; windowStartMs: number; windowEndMs: number; values: Record<string, number | null>; closed: boolean }[]> {
  const res = await call("GET", `/v1/dataflows/${id}/results${query}`);
  if (res.status !== 200) throw new Error(`GET results: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { results: Awaited<ReturnType<typeof results>> };
  return body.results;
}

/** One Server-Sent Event: its id (the cursor after it) and its parsed data. */
export interface SseEvent {
  id: string;
  data: { partition: number; outputSeq: number; key: string; windowStartMs: number; values: Record<string, number | null> };
}

/** Subscribes for `maxMs` (the server ends the stream then) and returns every event received. */
export async function subscribe(id: string, maxMs: number, cursor?: string): Promise<SseEvent[]> {
  const res = await call("GET", `/v1/dataflows/${id}/subscribe?maxMs=${maxMs}`, undefined, cursor === undefined ? {} : { "last-event-id": cursor });
  if (res.status !== 200) throw new Error(`subscribe: ${res.status} ${await res.text()}`);
  const text = await res.text();
  return text
    .split("\n\n")
    .filter((block) => block.includes("event: window"))
    .map((block) => {
      const line = (prefix: string) => block.split("\n").find((l) => l.startsWith(prefix))?.slice(prefix.length) ?? "";
      return { id: line("id: "), data: JSON.parse(line("data: ")) as SseEvent["data"] };
    });
}
