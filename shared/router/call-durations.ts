/**
 * How long a router's recent calls to primaries took (issue 12): a sub-batch whose call is in
 * flight cannot learn its outcome before that call ends, so it need not poll before the
 * shortest recent call would have ended. Bounded: the last {@link KEPT_CALLS} durations.
 */

/** How many recent durations are kept. */
const KEPT_CALLS = 16;

export class CallDurations {
  readonly #durationsMs: number[] = [];
  #next = 0;
  #shortestMs = 0;

  /** Records one call that took `ms` (failed calls too: one that failed fast only makes waiters poll sooner). */
  add(ms: number): void {
    if (this.#durationsMs.length < KEPT_CALLS) this.#durationsMs.push(ms);
    else this.#durationsMs[this.#next] = ms;
    this.#next = (this.#next + 1) % KEPT_CALLS;
    this.#shortestMs = Math.min(...this.#durationsMs);
  }

  /** The shortest of the recent calls, ms; 0 before any call ended. */
  get shortestMs(): number {
    return this.#shortestMs;
  }
}
