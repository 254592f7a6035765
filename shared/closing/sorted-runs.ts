/**
 * A window's keys as sorted runs, for closing it a slice at a time (issue 12). Sorting a
 * million keys at once takes most of a second, far over the probe timeout, so the keys
 * are sorted while they arrive, a run of {@link RUN_KEYS} at a time (a few ms each, in
 * the step that completes the run), and a close step merges the runs from where the
 * close had got to, taking just the next keys. Runs are memory only: a restored window
 * sorts its keys again as slices add them. Order: UTF-16 code units, as `sort()` and
 * the rest of the operator (`sorted-slots.ts`).
 */
import { firstAfter } from "../sorted.ts";

/** Keys per sorted run: sorting one takes ~10 ms. */
const RUN_KEYS = 16_384;

interface Runs {
  runs: (readonly string[])[];
  /** How many of the owner's keys (in insertion order) the runs hold: its first `covered`. */
  covered: number;
}

const runsByOwner = new WeakMap<object, Runs>();

function runsOf(owner: object): Runs {
  let runs = runsByOwner.get(owner);
  if (!runs) runsByOwner.set(owner, (runs = { runs: [], covered: 0 }));
  return runs;
}

/**
 * Sorts every whole run of keys `owner` added since the last call (`keys`: its keys in
 * insertion order, only ever appended to). Cheap when there is none.
 */
export function keepRuns(owner: object, keys: readonly string[]): void {
  if (keys.length - (runsByOwner.get(owner)?.covered ?? 0) < RUN_KEYS) return;
  const r = runsOf(owner);
  for (; keys.length - r.covered >= RUN_KEYS; r.covered += RUN_KEYS) r.runs.push(keys.slice(r.covered, r.covered + RUN_KEYS).sort());
}

/**
 * The first `count` keys of `owner` greater than `after` (null: from the first) in key
 * order, and whether more follow. Sorts the keys no run holds yet first (a window being
 * closed gets no new keys, so that happens once).
 */
export function nextKeys(owner: object, keys: readonly string[], after: string | null, count: number): { keys: string[]; more: boolean } {
  const r = runsOf(owner);
  if (r.covered < keys.length) {
    r.runs.push(keys.slice(r.covered).sort());
    r.covered = keys.length;
  }
  const heap = new RunHeap(r.runs.map((run) => ({ run, at: after === null ? 0 : firstAfter(run, after) })).filter((c) => c.at < c.run.length));
  const out: string[] = [];
  while (out.length < count && heap.size > 0) out.push(heap.pop());
  return { keys: out, more: heap.size > 0 };
}

interface RunCursor {
  run: readonly string[];
  at: number;
}

/** A min-heap of run cursors by their next key. */
class RunHeap {
  readonly #items: RunCursor[];

  constructor(items: RunCursor[]) {
    this.#items = items;
    for (let i = (items.length >> 1) - 1; i >= 0; i--) this.#down(i);
  }

  get size(): number {
    return this.#items.length;
  }

  /** The least next key; advances its run (dropped once exhausted). */
  pop(): string {
    const top = this.#items[0] as RunCursor;
    const key = top.run[top.at++] as string;
    if (top.at >= top.run.length) {
      const last = this.#items.pop() as RunCursor;
      if (this.#items.length === 0) return key;
      this.#items[0] = last;
    }
    this.#down(0);
    return key;
  }

  #key(i: number): string {
    const c = this.#items[i] as RunCursor;
    return c.run[c.at] as string;
  }

  #down(from: number): void {
    const items = this.#items;
    for (let i = from; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let least = i;
      if (l < items.length && this.#key(l) < this.#key(least)) least = l;
      if (r < items.length && this.#key(r) < this.#key(least)) least = r;
      if (least === i) return;
      [items[i], items[least]] = [items[least] as RunCursor, items[i] as RunCursor];
      i = least;
    }
  }
}
