/**
 * The rows of one window as of a checkpoint cursor's opening, for rows changed since
 * (copy-on-write, `aggregate-window-cursor.ts`). Kept in typed arrays, not as a text per
 * row: a checkpoint of a 1M-key state spans hundreds of batches, which change most rows
 * meanwhile, and a string and a Map entry per row made each full GC of that time slower
 * (issue 12). Only rows with sketches keep text, for their sketches alone. The numbers go in
 * blocks of {@link BLOCK_ROWS} rows, never copied: one array grown by doubling made the
 * step that crossed a power of two allocate and copy the lot (about 10 ms at 1M rows).
 */
import type { AggregateWindow, RowWatch } from "./aggregate-window.ts";
import { rowNumbersText, rowSketchesText } from "./window-row-json.ts";

/** Rows per block of kept numbers at most (a window of fewer rows has blocks of its size). */
const BLOCK_ROWS = 4096;

/** Preimages of the first `count` rows of a window. */
export class RowPreimages implements RowWatch {
  /** Rows at the opening: `0..count-1`. */
  readonly count: number;
  /** Rows the cursor has written already: their later changes need no preimage. */
  written = 0;
  /** Row → 1 + its place among the kept rows (0: not kept); allocated at the first change. */
  #placeOf: Int32Array | null = null;
  /** Rows per block: never more than the window had at the opening, so a small one allocates little. */
  readonly #blockRows: number;
  /** Kept rows' numbers, `#blockRows` rows of `stride` per block, in the order kept. */
  readonly #blocks: Float64Array[] = [];
  #kept = 0;
  /** Sketch text of kept rows, when rows have sketches. */
  readonly #sketches = new Map<number, string>();

  constructor(count: number) {
    this.count = count;
    this.#blockRows = Math.max(1, Math.min(BLOCK_ROWS, count));
  }

  /** Keeps `row` as it is now unless it was kept already or was added after the opening. */
  keep(window: AggregateWindow, row: number): void {
    if (row >= this.count || row < this.written) return;
    const placeOf = (this.#placeOf ??= new Int32Array(this.count));
    if (placeOf[row] !== 0) return;
    const { stride, sketches, summaries } = window.layout;
    const place = this.#kept;
    if (place % this.#blockRows === 0) this.#blocks.push(new Float64Array(this.#blockRows * stride));
    const block = this.#blocks[this.#blocks.length - 1] as Float64Array;
    const at = (place % this.#blockRows) * stride;
    // A loop, not `set(subarray(…))`: no view object per row kept.
    const values = window.values;
    for (let i = 0; i < stride; i++) block[at + i] = values[row * stride + i] as number;
    if (sketches + summaries > 0) this.#sketches.set(row, rowSketchesText(window, row));
    placeOf[row] = ++this.#kept;
  }

  /** The block holding `row`'s numbers as of the opening (from {@link savedAt}), or null when it has not changed since. */
  savedBlock(row: number): Float64Array | null {
    const place = this.#placeOf?.[row] ?? 0;
    return place === 0 ? null : (this.#blocks[Math.floor((place - 1) / this.#blockRows)] as Float64Array);
  }

  /** Where `row`'s numbers start in its {@link savedBlock} (rows of `stride`); only for a row kept. */
  savedAt(row: number, stride: number): number {
    return ((((this.#placeOf as Int32Array)[row] as number) - 1) % this.#blockRows) * stride;
  }

  /** The accumulator text of `row` as of the opening, or undefined when it has not changed since. */
  textOf(window: AggregateWindow, row: number): string | undefined {
    const block = this.savedBlock(row);
    if (block === null) return undefined;
    return `${rowNumbersText(window.layout, block, this.savedAt(row, window.layout.stride))}${this.#sketches.get(row) ?? ""}}`;
  }
}
