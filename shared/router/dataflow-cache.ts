/**
 * A Worker isolate's cache of dataflow records for readers (issue 29): results, subscribe and
 * status read a dataflow's routing from its monitor at most once per `ttlMs` per isolate,
 * so a burst of readers costs the monitor one call per isolate, not one per request. A
 * read refused by a replaced primary refreshes it at once (`functions/cluster.ts`). Misses
 * are never cached, so a new dataflow is readable at once.
 */
import type { DataflowRecord } from "../wire/routing.ts";

export class DataflowCache {
  readonly #entries = new Map<string, { record: DataflowRecord; fetchedAtMs: number }>();
  readonly #ttlMs: number;

  /** @param ttlMs how long an entry is trusted, ms (0 disables caching). */
  constructor(ttlMs: number) {
    this.#ttlMs = ttlMs;
  }

  /** The cached record of `id`, or undefined when absent or expired at `nowMs`. */
  get(id: string, nowMs: number): DataflowRecord | undefined {
    const entry = this.#entries.get(id);
    if (!entry || nowMs - entry.fetchedAtMs >= this.#ttlMs) return undefined;
    return entry.record;
  }

  /** Stores what a lookup found; none (a deleted dataflow) drops the entry. */
  set(id: string, record: DataflowRecord | null, nowMs: number): void {
    if (record === null) this.#entries.delete(id);
    else if (this.#ttlMs > 0) this.#entries.set(id, { record, fetchedAtMs: nowMs });
  }
}
