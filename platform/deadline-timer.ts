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
 * it) or a Durable Object (whose requests share one context). It is the one deadline
 * mechanism for calls to objects (`race`; `withDeadline` in object-calls.ts for one call).
 * With `clearWhenIdle`, the armed timers are cleared once no deadline waits, so an object
 * keeps no timer pending after its calls (a one-off call costs a setTimeout and a clearTimeout).
 */

interface Armed {
  due: number;
  handle: unknown;
}

interface Deadline {
  due: number;
  fire(): void;
}

/** The clock and the timer the deadlines run on (the runtime's by default; fakes in tests). */
export interface TimerClock {
  now(): number;
  setTimer(run: () => void, ms: number): unknown;
  /** Cancels what `setTimer` returned (needed only with `clearWhenIdle`). */
  clearTimer?(handle: unknown): void;
}

const RUNTIME: TimerClock = {
  now: () => Date.now(),
  setTimer: (run, ms) => setTimeout(run, ms),
  clearTimer: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export class DeadlineTimer {
  readonly #clock: TimerClock;
  readonly #clearWhenIdle: boolean;
  readonly #deadlines = new Set<Deadline>();
  /** When each armed timer fires (few: one, plus any armed earlier for a nearer deadline), and its handle. */
  readonly #armed: Armed[] = [];

  constructor(clock: TimerClock = RUNTIME, options: { clearWhenIdle?: boolean } = {}) {
    this.#clock = clock;
    this.#clearWhenIdle = options.clearWhenIdle === true;
  }

  /** Runs `fire` once `ms` from now unless the returned function is called first. */
  after(ms: number, fire: () => void): () => void {
    const deadline: Deadline = { due: this.#clock.now() + ms, fire };
    this.#deadlines.add(deadline);
    if (deadline.due < this.#nextTimer()) this.#arm(deadline.due);
    return () => {
      if (this.#deadlines.delete(deadline) && this.#deadlines.size === 0 && this.#clearWhenIdle) this.#clearAll();
    };
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
    let next = Number.POSITIVE_INFINITY;
    for (const armed of this.#armed) next = Math.min(next, armed.due);
    return next;
  }

  #arm(due: number): void {
    const armed: Armed = { due, handle: undefined };
    this.#armed.push(armed);
    // At least 1 ms: a clock that has not moved yet must not spin the timer.
    armed.handle = this.#clock.setTimer(() => this.#fired(armed), Math.max(1, due - this.#clock.now()));
  }

  #clearAll(): void {
    for (const { handle } of this.#armed.splice(0)) this.#clock.clearTimer?.(handle);
  }

  #fired(armed: Armed): void {
    const index = this.#armed.indexOf(armed);
    if (index < 0) return; // cleared, though it ran anyway
    this.#armed.splice(index, 1);
    const now = this.#clock.now();
    let next = Number.POSITIVE_INFINITY;
    for (const deadline of this.#deadlines) {
      if (deadline.due <= now) {
        this.#deadlines.delete(deadline);
        deadline.fire();
      } else next = Math.min(next, deadline.due);
    }
    if (this.#deadlines.size === 0 && this.#clearWhenIdle) this.#clearAll();
    // A timer armed earlier that fires no later than the next deadline serves it.
    else if (next < this.#nextTimer()) this.#arm(next);
  }
}
