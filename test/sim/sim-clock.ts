/**
 * Simulated time for the deterministic simulator: a queue of timers in (time, creation)
 * order. Each due timer resolves its promise, then the scheduler lets every microtask
 * run before the next one, so one seed always yields one interleaving. No wall clock.
 */

interface Timer {
  at: number;
  id: number;
  resolve: () => void;
  cancelled: boolean;
}

/** Lets all pending microtasks run (a macrotask boundary; not a clock read). */
const drain = () => new Promise<void>((resolve) => setImmediate(resolve));

export class SimClock {
  now = 0;
  #heap: Timer[] = [];
  #nextId = 0;

  /** Resolves `ms` of simulated time from now. */
  sleep(ms: number): Promise<void> {
    return this.timer(ms).promise;
  }

  /** A cancellable timer; cancelled timers are skipped without a scheduling step. */
  timer(ms: number): { promise: Promise<void>; cancel: () => void } {
    let entry: Timer | undefined;
    const promise = new Promise<void>((resolve) => {
      entry = { at: this.now + Math.max(0, ms), id: this.#nextId++, resolve, cancelled: false };
      this.#push(entry);
    });
    return { promise, cancel: () => entry && (entry.cancelled = true) };
  }

  /** Runs timers until `done()` holds, the queue empties, or time passes `untilMs`. */
  async run(untilMs: number, done: () => boolean = () => false): Promise<void> {
    await drain();
    while (!done()) {
      const next = this.#pop();
      if (!next) return;
      if (next.at > untilMs) {
        this.#push(next);
        this.now = untilMs;
        return;
      }
      this.now = next.at;
      next.resolve();
      await drain();
    }
  }

  #push(timer: Timer): void {
    const heap = this.#heap;
    heap.push(timer);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i], heap[parent])) break;
      [heap[i], heap[parent]] = [heap[parent] as Timer, heap[i] as Timer];
      i = parent;
    }
  }

  #pop(): Timer | undefined {
    const heap = this.#heap;
    for (;;) {
      const top = heap[0];
      if (!top) return undefined;
      const last = heap.pop() as Timer;
      if (heap.length > 0) {
        heap[0] = last;
        let i = 0;
        for (;;) {
          const l = 2 * i + 1;
          const r = l + 1;
          let m = i;
          if (l < heap.length && before(heap[l], heap[m])) m = l;
          if (r < heap.length && before(heap[r], heap[m])) m = r;
          if (m === i) break;
          [heap[i], heap[m]] = [heap[m] as Timer, heap[i] as Timer];
          i = m;
        }
      }
      if (!top.cancelled) return top;
    }
  }
}

function before(a: Timer | undefined, b: Timer | undefined): boolean {
  if (!a || !b) return false;
  return a.at < b.at || (a.at === b.at && a.id < b.id);
}
