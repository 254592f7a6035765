/**
 * A fake Flux ingest endpoint for client unit tests: applies each (producer, seq) once,
 * like the real replicas, and can be told how to answer the next requests (a 503 with
 * Retry-After, a network failure, an answer lost or held back after applying, a hang, any error).
 */
import type { FetchLike, RequestOptions, ResponseLike } from "../../shared/client/runtime.ts";

/** How to answer one request instead of normally. */
export type Script =
  | { kind: "status"; status: number; code: string; retryAfter?: string }
  | { kind: "network" }
  /** Applies the batch, then fails as if the answer was lost. */
  | { kind: "lose-answer" }
  /** Never answers. */
  | { kind: "hang" }
  /** Answers as usual (a placeholder, so a later script meets a later request). */
  | { kind: "answer" }
  /** Applies the batch, then answers only once `release` resolves. */
  | { kind: "hold-answer"; release: Promise<void> };

/** One request the server saw. */
export interface SeenRequest {
  atMs: number;
  producer: string;
  seq: number;
  events: number;
  keepalive: boolean;
  authorization: string | null;
}

export class FakeIngestServer {
  readonly requests: SeenRequest[] = [];
  /** Every applied event, in order of application. */
  readonly applied: unknown[] = [];
  private readonly seen = new Map<string, Set<number>>();
  private readonly script: Script[] = [];
  /** When set, the answer carries the newer per-dataflow `records` counts. */
  recordCounts: ((events: unknown[]) => { accepted: number; filtered: number; late: number }) | null = null;

  private readonly now: () => number;

  constructor(now: () => number) {
    this.now = now;
  }

  /** Queues answers for the next requests, in order. */
  next(...scripts: Script[]): void {
    this.script.push(...scripts);
  }

  readonly fetch: FetchLike = async (url: string, init: RequestOptions): Promise<ResponseLike> => {
    const producer = init.headers["flux-producer-id"] ?? "";
    const seq = Number(init.headers["flux-seq"]);
    const events = JSON.parse(init.body ?? "[]") as unknown[];
    this.requests.push({ atMs: this.now(), producer, seq, events: events.length, keepalive: init.keepalive === true, authorization: init.headers.authorization ?? null });
    const stream = /\/v1\/streams\/([^/]+)\/events$/.exec(url)?.[1] ?? "";
    const step = this.script.shift();
    if (step?.kind === "hang") return new Promise(() => {});
    if (step?.kind === "network") throw new TypeError("fetch failed");
    if (step?.kind === "status") {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (step.retryAfter !== undefined) headers["retry-after"] = step.retryAfter;
      return new Response(JSON.stringify({ error: { code: step.code, message: `scripted ${step.code}` } }), { status: step.status, headers });
    }
    const applied = this.seen.get(producer) ?? new Set<number>();
    this.seen.set(producer, applied);
    const duplicate = applied.has(seq);
    if (!duplicate) {
      applied.add(seq);
      this.applied.push(...events);
    }
    if (step?.kind === "lose-answer") throw new TypeError("connection reset");
    if (step?.kind === "hold-answer") await step.release;
    const dataflow = { dataflow: "df", partitions: [{ partition: 0, lsn: this.applied.length, replicated: true, duplicate }], ...(this.recordCounts && !duplicate ? { records: this.recordCounts(events) } : {}) };
    const body = { stream, producer, seq, events: events.length, duplicate, dataflows: [dataflow] };
    return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
  };
}
