/**
 * A router's cache of the routing table, by stream (DESIGN.md §4: routers cache routing
 * and refresh on a stale-epoch answer). Entries expire after `ttlMs`; misses are never
 * cached, so a new dataflow is visible at once.
 */
import type { DataflowRecord } from "../wire/routing.ts";

/** Per-isolate cache; time is passed in so the cache stays pure. */
export class RoutingCache {
  readonly #entries = new Map<string, { records: DataflowRecord[]; fetchedAtMs: number }>();

  /** @param ttlMs how long an entry is trusted, ms (0 disables caching). */
  constructor(readonly ttlMs: number) {}

  /** Cached dataflows reading `stream`, or undefined when absent or expired at `nowMs`. */
  get(stream: string, nowMs: number): DataflowRecord[] | undefined {
    const entry = this.#entries.get(stream);
    if (!entry || nowMs - entry.fetchedAtMs >= this.ttlMs) return undefined;
    return entry.records;
  }

  /** Stores a non-empty lookup result. */
  set(stream: string, records: DataflowRecord[], nowMs: number): void {
    if (records.length > 0 && this.ttlMs > 0) this.#entries.set(stream, { records, fetchedAtMs: nowMs });
  }

  /** Forgets one stream (after a stale-epoch answer) or everything. */
  invalidate(stream?: string): void {
    if (stream === undefined) this.#entries.clear();
    else this.#entries.delete(stream);
  }
}
