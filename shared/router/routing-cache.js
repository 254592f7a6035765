/** Per-isolate cache; time is passed in so the cache stays pure. */
export class RoutingCache {
    #entries = new Map();
    ttlMs;
    /** @param ttlMs how long an entry is trusted, ms (0 disables caching). */
    constructor(ttlMs) {
        this.ttlMs = ttlMs;
    }
    /**
     * Cached routing of `stream`, or undefined when absent or expired at `nowMs`.
     * Pass `-Infinity` as `nowMs` to get an entry however old (the coordinator is down).
     */
    get(stream, nowMs) {
        const entry = this.#entries.get(stream);
        if (!entry || nowMs - entry.fetchedAtMs >= this.ttlMs)
            return undefined;
        return entry.routing;
    }
    /** Stores a lookup result that has dataflows. */
    set(stream, routing, nowMs) {
        if (routing.dataflows.length > 0 && this.ttlMs > 0)
            this.#entries.set(stream, { routing, fetchedAtMs: nowMs });
    }
    /** Marks one stream's entry expired (after a stale-epoch answer or a failed write), keeping it as a fallback. */
    expire(stream) {
        const entry = this.#entries.get(stream);
        if (entry)
            entry.fetchedAtMs = Number.NEGATIVE_INFINITY;
    }
}
