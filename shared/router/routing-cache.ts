/**
 * A router's cache of the routing table, by stream (DESIGN.md §4: routers cache routing
 * and refresh on a stale-epoch answer). Entries expire after `ttlMs`; misses are never
 * cached, so a new dataflow is visible at once, and a miss drops the stream's entry.
 */
import type { DataflowRecord } from "../wire/routing.ts";
import type { StreamSchema } from "../wire/stream-schema.ts";

/** What a router needs to accept a batch for a stream: the dataflows reading it and its declared schema. */
export interface StreamRouting {
  dataflows: DataflowRecord[];
  schema: StreamSchema | null;
}

/** Per-isolate cache; time is passed in so the cache stays pure. */
export class RoutingCache {
  readonly #entries = new Map<string, { routing: StreamRouting; fetchedAtMs: number }>();

  readonly ttlMs: number;

  /** @param ttlMs how long an entry is trusted, ms (0 disables caching). */
  constructor(ttlMs: number) {
    this.ttlMs = ttlMs;
  }

  /**
   * Cached routing of `stream`, or undefined when absent or expired at `nowMs`.
   * Pass `-Infinity` as `nowMs` to get an entry however old (the stream's directory or a monitor is down).
   */
  get(stream: string, nowMs: number): StreamRouting | undefined {
    const entry = this.#entries.get(stream);
    if (!entry || nowMs - entry.fetchedAtMs >= this.ttlMs) return undefined;
    return entry.routing;
  }

  /**
   * Stores a lookup result that has dataflows; one without drops the stream's entry, so a
   * deleted dataflow is neither kept by an isolate that lives on (one entry per stream ever
   * routed) nor used as the fallback while the directory is down.
   */
  set(stream: string, routing: StreamRouting, nowMs: number): void {
    if (routing.dataflows.length === 0) this.#entries.delete(stream);
    else if (this.ttlMs > 0) this.#entries.set(stream, { routing, fetchedAtMs: nowMs });
  }

  /** Marks one stream's entry expired (after a stale-epoch answer or a failed write), keeping it as a fallback. */
  expire(stream: string): void {
    const entry = this.#entries.get(stream);
    if (entry) entry.fetchedAtMs = Number.NEGATIVE_INFINITY;
  }
}
