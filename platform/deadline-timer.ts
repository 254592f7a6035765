/**
 * Many deadlines on one timer (issue 12, deliverable 3): instead of a `setTimeout` and a
 * `clearTimeout` per call, one timer stays armed for the earliest deadline. A deadline
 * that is met is merely forgotten; the timer is left to fire, finds nothing due and
 * re-arms for the next one (if any), so calls that follow each other closely share it.
 * A nearer deadline arms a timer of its own, and the one armed before stays to serve what
 * is due by its time, so none is wasted. A deadline fires no earlier than it is due and,
 * timers permitting, not later either.
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
  /** When each armed timer fires (few: one, plus any armed earlier for a nearer deadline). */
  readonly #armed: number[] = [];

  constructor(clock: TimerClock = RUNTIME) {
    this.#clock = clock;
  }

  /** Runs `fire` once `ms` from now unless the returned function is called first. */
  after(ms: number, fire: () => void): () => void {
    const deadline: Deadline = { due: this.#clock.now() + ms, fire };
    this.#deadlines.add(deadline);
    if (deadline.due < this.#nextTimer()) this.#arm(deadline.due);
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

  #nextTimer(): number {
    return this.#armed.length === 0 ? Number.POSITIVE_INFINITY : Math.min(...this.#armed);
  }

  #arm(due: number): void {
    this.#armed.push(due);
    // At least 1 ms: a clock that has not moved yet must not spin the timer.
    this.#clock.setTimer(() => this.#fired(due), Math.max(1, due - this.#clock.now()));
  }

  #fired(at: number): void {
    this.#armed.splice(this.#armed.indexOf(at), 1);
    const now = this.#clock.now();
    let next = Number.POSITIVE_INFINITY;
    for (const deadline of this.#deadlines) {
      if (deadline.due <= now) {
        this.#deadlines.delete(deadline);
        deadline.fire();
      } else next = Math.min(next, deadline.due);
    }
    // A timer armed earlier that fires no later than the next deadline serves it.
    if (next < this.#nextTimer()) this.#arm(next);
  }
}
