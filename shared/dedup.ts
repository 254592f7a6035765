/**
 * Exact, bounded duplicate detection per producer (issue 2). For each producer a
 * replica remembers its highest applied seq and which seqs within the window below it
 * were applied. Inside the window the answer is exact; a seq below the window cannot be
 * judged and is refused (`too-old`), never silently dropped or applied twice.
 * Memory: at most `window` seqs per producer.
 */
import { lowerBound } from "./sorted.ts";
import type { DedupState } from "./wire/persisted.ts";

/** The verdict for an incoming `(producer, seq)`. */
export type DedupVerdict = "new" | "duplicate" | "too-old";

/**
 * Judges a seq against what was applied. `window` is the number of seqs below the
 * highest that stay recognisable; a seq at or below `high - window` is `too-old`.
 */
export function judgeSeq(state: DedupState, producer: string, seq: number, window: number): DedupVerdict {
  const entry = state[slotOf(producer)];
  if (!entry || seq > entry.high) return "new";
  // The floor keeps a later, larger window from reading pruned seqs as never applied.
  if (seq <= Math.max(entry.high - window, entry.floor)) return "too-old";
  return binarySearch(entry.applied, seq) ? "duplicate" : "new";
}

/**
 * Records that `seq` was applied and forgets seqs that fell out of the window.
 * Callers judge first; recording a seq twice is a no-op.
 */
export function recordSeq(state: DedupState, producer: string, seq: number, window: number): void {
  const entry = state[slotOf(producer)];
  if (!entry) {
    state[slotOf(producer)] = { high: seq, applied: [seq], floor: 0 };
    return;
  }
  if (seq > entry.high) {
    entry.high = seq;
    entry.applied.push(seq);
    const floor = seq - window;
    let drop = 0;
    while (drop < entry.applied.length && (entry.applied[drop] ?? 0) <= floor) drop++;
    // One seq leaves per seq applied: shift() trims the array's start in place, where
    // splice(0, 1) moved the whole window (~1 µs per entry at the default 1,024; issue 12).
    if (drop === 1) entry.applied.shift();
    else if (drop > 1) entry.applied.splice(0, drop);
    entry.floor = Math.max(entry.floor, floor);
    return;
  }
  if (seq <= Math.max(entry.high - window, entry.floor) || binarySearch(entry.applied, seq)) return;
  const at = lowerBound(entry.applied, seq);
  entry.applied.splice(at, 0, seq);
}

/** The highest seq applied for `producer`, or 0. */
export function highestSeq(state: DedupState, producer: string): number {
  return state[slotOf(producer)]?.high ?? 0;
}

/** Producer ids are stored `$`-prefixed so ids like `__proto__` cannot hit Object.prototype. */
function slotOf(producer: string): string {
  return `$${producer}`;
}

function binarySearch(sorted: readonly number[], value: number): boolean {
  return sorted[lowerBound(sorted, value)] === value;
}
