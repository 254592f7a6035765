/**
 * Many deadlines on one timer (issue 12, deliverable 3): instead of a `setTimeout` and a
 * `clearTimeout` per call, one timer stays armed for the earliest deadline. A deadline
 * that is met is merely forgotten; the timer is left to fire, finds nothing due and
 * re-arms for the next one (if any), so calls that follow each other closely share it.
 * A deadline fires no earlier than it is due and, timers permitting, not later either.
 *
 * One instance per context that may own a timer: a Worker request (its timers die with
 * it) or a Durable Object (whose requests share one context).
 */

interface Deadline {
  due: number;
  fire(): void;
}

/** The clock and the timer the deadlines run on (the runtime's by default; fakes in tests). */
export interface TimerClock {
  now(): number;
  setTimer(run: () => void, ms: number): unknown;
}

const RUNTIME: TimerClock = { now: () => Date.now(), setTimer: (run, ms) => setTimeout(run, ms) };

export class DeadlineTimer {
  readonly #clock: TimerClock;
  readonly #deadlines = new Set<Deadline>();
  /** When the armed timer fires (Infinity: none armed). */
  #armedFor = Number.POSITIVE_INFINITY;

  constructor(clock: TimerClock = RUNTIME) {
    this.#clock = clock;
  }

  /** Runs `fire` once `ms` from now unless the returned function is called first. */
  after(ms: number, fire: () => void): () => void {
    const deadline: Deadline = { due: this.#clock.now() + ms, fire };
    this.#deadlines.add(deadline);
    if (deadline.due < this.#armedFor) this.#arm(deadline.due);
    return () => void this.#deadlines.delete(deadline);
  }

  /** `promise`, or a rejection naming `what` if it has not settled within `ms`. */
  race<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
    return this.watch(promise, ms, (reject) => reject(new Error(`${what} did not answer within ${ms} ms`)));
  }

  /** `promise`, unless `late` rejects it first: `late` runs once `promise` has been pending for `ms`. */
  watch<T>(promise: Promise<T>, ms: number, late: (reject: (err: unknown) => void) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const forget = this.after(ms, () => late(reject));
      promise.then(
        (value) => {
          forget();
          resolve(value);
        },
        (err: unknown) => {
          forget();
          reject(err);
        },
      );
    });
  }

  /** How many deadlines wait (for tests). */
  get pending(): number {
    return this.#deadlines.size;
  }

  #arm(due: number): void {
    // An earlier timer may still be armed: it fires, finds nothing due and re-arms no earlier than needed.
    this.#armedFor = due;
    // At least 1 ms: a clock that has not moved yet must not spin the timer.
    this.#clock.setTimer(() => this.#fired(due), Math.max(1, due - this.#clock.now()));
  }

  #fired(armedFor: number): void {
    if (armedFor !== this.#armedFor) return; // superseded by an earlier one, which has re-armed
    this.#armedFor = Number.POSITIVE_INFINITY;
    const now = this.#clock.now();
    let next = Number.POSITIVE_INFINITY;
    for (const deadline of this.#deadlines) {
      if (deadline.due <= now) {
        this.#deadlines.delete(deadline);
        deadline.fire();
      } else next = Math.min(next, deadline.due);
    }
    if (next < this.#armedFor) this.#arm(next);
  }
}
