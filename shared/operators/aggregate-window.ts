/**
 * One open window of the window-aggregate operator, stored by column (issue 12): a key's
 * count, sums, minima and maxima are one row of a Float64Array, found through one Map from
 * key to row. In workerd V8 marks the whole heap in one pause and pays per object: an
 * object per accumulator plus one per array made a 1M-key state ~7M objects and ~1 s per
 * full GC; here a key costs its string, plus its sketches for `distinct`/`topk`. Rows are
 * only ever added (a window is dropped whole), so row order is insertion order.
 */
import type { HllState } from "./sketches/hyperloglog.ts";
import type { TopKState } from "./sketches/space-saving.ts";
import { mergeSorted } from "./sorted-slots.ts";

/** Where a row keeps what: `[n, sum × width, (min × width, max × width)?]`, then the sketches beside it. */
export interface RowLayout {
  /** Numeric fields. */
  width: number;
  /** Whether min and max columns exist (only when an aggregate reads them). */
  extremes: boolean;
  /** Numbers per row: 1 + width, or 1 + 3 × width with extremes. */
  stride: number;
  /** `distinct` sketches per row. */
  sketches: number;
  /** `topk` summaries per row. */
  summaries: number;
}

/** The layout of rows for `width` numeric fields. */
export function rowLayout(width: number, extremes: boolean, sketches: number, summaries: number): RowLayout {
  return { width, extremes, stride: 1 + (extremes ? 3 : 1) * width, sketches, summaries };
}

/**
 * What a checkpoint cursor sets on a window it still has to write (`RowPreimages`): told
 * before a row changes, so that it keeps the row as it was at the cursor's opening. An
 * interface here, so the window needs nothing of the cursor's files (issue 26).
 */
export interface RowWatch {
  /** Keeps `row` as it is now unless it needs no keeping. */
  keep(window: AggregateWindow, row: number): void;
}

/** The rows of one window: key → row, and the columns. */
export class AggregateWindow {
  readonly layout: RowLayout;
  /** Key → row. */
  readonly index = new Map<string, number>();
  /** Row → key. */
  readonly keys: string[] = [];
  /** Row-major numbers (`layout.stride` per row); replaced, larger, as rows are added: read it after `add`. */
  values: Float64Array;
  /** `layout.sketches` per row, row after row. */
  readonly hll: HllState[] = [];
  /** `layout.summaries` per row, row after row. */
  readonly top: TopKState[] = [];
  /** Set while a checkpoint cursor still has to write this window: its rows as of the opening. */
  watch: RowWatch | null = null;
  #sorted: readonly string[] = [];

  constructor(layout: RowLayout) {
    this.layout = layout;
    this.values = new Float64Array(layout.stride * 16);
  }

  get size(): number {
    return this.keys.length;
  }

  /** The key's row (-1: none); call before changing it, so an open cursor keeps it as it was. */
  rowForUpdate(key: string): number {
    const row = this.index.get(key);
    if (row === undefined) return -1;
    if (this.watch !== null) this.watch.keep(this, row);
    return row;
  }

  /**
   * Adds a row for a key the window does not hold: count and sums 0, minima +∞ and maxima
   * −∞ (so the first value replaces them without a test per value). The caller pushes its
   * sketches to `hll` and `top`.
   */
  add(key: string): number {
    const row = this.keys.length;
    const { stride, width, extremes } = this.layout;
    if ((row + 1) * stride > this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    if (extremes) this.values.fill(Number.POSITIVE_INFINITY, row * stride + 1 + width, row * stride + 1 + 2 * width).fill(Number.NEGATIVE_INFINITY, row * stride + 1 + 2 * width, (row + 1) * stride);
    this.index.set(key, row);
    this.keys.push(key);
    return row;
  }

  /**
   * The keys in key order (UTF-16 code units, the order results are emitted and served in);
   * do not modify. Sorting a million keys takes about a second, so the order is kept and
   * the keys added since are sorted on their own and merged in.
   */
  sortedKeys(): readonly string[] {
    const known = this.#sorted;
    if (known.length === this.keys.length) return known;
    // Plain `sort()` compares strings by UTF-16 code units; keys are distinct.
    const added = this.keys.slice(known.length).sort();
    this.#sorted = known.length === 0 ? added : mergeSorted(known, added);
    return this.#sorted;
  }
}
