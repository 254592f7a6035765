/**
 * The rows of one window as of a checkpoint cursor's opening, for rows changed since
 * (copy-on-write, `aggregate-window-cursor.ts`). Kept in typed arrays, not as a text per
 * row: a checkpoint of a 1M-key state spans hundreds of batches, which change most rows
 * meanwhile, and a string and a Map entry per row made each full GC of that time slower
 * (issue 12). Only rows with sketches keep text, for their sketches alone.
 */
import type { AggregateWindow } from "./aggregate-window.ts";
import { rowNumbersText, rowSketchesText } from "./window-row-json.ts";

/** Preimages of the first `count` rows of a window. */
export class RowPreimages {
  /** Rows at the opening: `0..count-1`. */
  readonly count: number;
  /** Rows the cursor has written already: their later changes need no preimage. */
  written = 0;
  /** Row → 1 + its place in `#saved` (0: not kept); allocated at the first change. */
  #placeOf: Int32Array | null = null;
  #saved = new Float64Array(0);
  #kept = 0;
  /** Sketch text of kept rows, when rows have sketches. */
  readonly #sketches = new Map<number, string>();

  constructor(count: number) {
    this.count = count;
  }

  /** Keeps `row` as it is now unless it was kept already or was added after the opening. */
  keep(window: AggregateWindow, row: number): void {
    if (row >= this.count || row < this.written) return;
    const placeOf = (this.#placeOf ??= new Int32Array(this.count));
    if (placeOf[row] !== 0) return;
    const { stride, sketches, summaries } = window.layout;
    if ((this.#kept + 1) * stride > this.#saved.length) {
      const grown = new Float64Array(Math.max(1024 * stride, this.#saved.length * 2));
      grown.set(this.#saved);
      this.#saved = grown;
    }
    // A loop, not `set(subarray(…))`: no view object per row kept.
    const values = window.values;
    for (let i = 0; i < stride; i++) this.#saved[this.#kept * stride + i] = values[row * stride + i] as number;
    if (sketches + summaries > 0) this.#sketches.set(row, rowSketchesText(window, row));
    placeOf[row] = ++this.#kept;
  }

  /** The kept rows' numbers (`layout.stride` per kept row): read with {@link savedAt}. */
  get saved(): Float64Array {
    return this.#saved;
  }

  /** Where `row`'s numbers as of the opening start in {@link saved} (rows of `stride`), or -1 when it has not changed since. */
  savedAt(row: number, stride: number): number {
    const place = this.#placeOf?.[row] ?? 0;
    return place === 0 ? -1 : (place - 1) * stride;
  }

  /** The accumulator text of `row` as of the opening, or undefined when it has not changed since. */
  textOf(window: AggregateWindow, row: number): string | undefined {
    const place = this.#placeOf?.[row] ?? 0;
    if (place === 0) return undefined;
    return `${rowNumbersText(window.layout, this.#saved, (place - 1) * window.layout.stride)}${this.#sketches.get(row) ?? ""}}`;
  }
}
