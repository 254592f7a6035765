/**
 * The state shape of per-key event-time windows (`keyed-windows.ts`): open windows by
 * start (ms), then `$`-prefixed key, plus the highest event time seen and the late count.
 * A type of its own so the slot lists and cursor (`keyed-window-cursor.ts`) sit below it.
 */

/** Open windows of accumulators `A`. */
export interface KeyedWindows<A> {
  maxTimeMs: number | null;
  lateRecords: number;
  open: Record<string, Record<string, A>>;
}
