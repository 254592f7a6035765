/**
 * A router's copy of the revocation list (issue 26), so checking a signed token costs no
 * object call: refreshed when older than `maxAgeMs` (FLUX_REVOCATION_CACHE_MS), one
 * refresh at a time. Its age counts from when the refresh started, so a revocation the
 * registry recorded at `r` is refused by every request from `r + maxAgeMs` on.
 */

/** Reads the registry's list of revoked ids. */
export type FetchRevoked = () => Promise<readonly string[]>;

/** Per-isolate cache; time is passed in so the cache stays pure. */
export class RevocationCache {
  #ids = new Set<string>();
  /** Ids this isolate revoked, by when, until a list asked for after that holds them. */
  readonly #added = new Map<string, number>();
  /** When the list in use was asked for, epoch ms; -Infinity before the first answer. */
  #fetchedAtMs = Number.NEGATIVE_INFINITY;
  #loaded = false;
  #refresh: Promise<void> | null = null;

  readonly maxAgeMs: number;
  readonly #fetch: FetchRevoked;

  /** @param maxAgeMs how long a fetched list is trusted, ms (0: asked for on every check). */
  constructor(maxAgeMs: number, fetch: FetchRevoked) {
    this.maxAgeMs = maxAgeMs;
    this.#fetch = fetch;
  }

  /**
   * Whether `id` is revoked, refreshing the list first when it is older than `maxAgeMs` at
   * `nowMs`. If the refresh fails, the list already held is used and asked for again only
   * `maxAgeMs` later (so a registry that is down does not slow every request).
   * @throws the fetch's error when no list was ever fetched (the caller answers 503).
   */
  async isRevoked(id: string, nowMs: number): Promise<boolean> {
    if (nowMs - this.#fetchedAtMs >= this.maxAgeMs) await this.#refreshed(nowMs);
    return this.#ids.has(id) || this.#added.has(id);
  }

  /** Records a revocation the registry confirmed by `nowMs`, so that this isolate enforces it at once. */
  add(id: string, nowMs: number): void {
    this.#added.set(id, nowMs);
  }

  #refreshed(nowMs: number): Promise<void> {
    this.#refresh ??= this.#fetch().then(
      (ids) => {
        this.#ids = new Set(ids);
        this.#fetchedAtMs = nowMs;
        // A list asked for after a revocation was confirmed holds it; an older one may not.
        for (const [added, atMs] of this.#added) if (atMs < nowMs) this.#added.delete(added);
        this.#loaded = true;
      },
      (err: unknown) => {
        if (!this.#loaded) throw err;
        this.#fetchedAtMs = nowMs;
      },
    ).finally(() => {
      this.#refresh = null;
    });
    return this.#refresh;
  }
}
