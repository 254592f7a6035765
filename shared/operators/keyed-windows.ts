/**
 * Per-key event-time windows as operators keep them in their state: open windows by
 * start (ms), then `$`-prefixed key, plus the highest event time seen. Closing windows
 * as event time advances, serving open windows to queries and checking a restored state
 * are the same for every such operator (the built-in aggregates, heavy-hitters), so they
 * live here; each operator supplies its accumulator and how one becomes a result.
 */
import { isAfter, type WindowResult } from "../wire/window-result.ts";
import type { KeyedWindows } from "./keyed-window-state.ts";
import type { Emit, ResultFilter } from "./operator.ts";
import { firstAfter } from "../sorted.ts";
import { sortedSlots } from "./sorted-slots.ts";
import { slotsOf } from "./keyed-window-cursor.ts";

/** A window's result from its accumulator, or null when it has nothing to report. */
export type ToResult<A> = (key: string, startMs: number, acc: A, closed: boolean) => WindowResult | null;

/**
 * Keys are stored with a `$` prefix so that user keys such as `__proto__` or
 * `constructor` can never collide with Object.prototype members; the prefix keeps the
 * sort order of the keys themselves.
 */
export function slotOfKey(key: string): string {
  return `$${key}`;
}

function keyOfSlot(slot: string): string {
  return slot.slice(1);
}

/**
 * Raises event time to `timeMs` (never lowers it), then emits, in (start, key) order,
 * every window of `sizeMs` that ends at or before the watermark `timeMs - latenessMs`,
 * and drops them.
 */
export function advanceTo<A>(state: KeyedWindows<A>, timeMs: number, sizeMs: number, latenessMs: number, toResult: ToResult<A>, out: Emit<WindowResult>): void {
  if (state.maxTimeMs !== null && timeMs <= state.maxTimeMs) return;
  state.maxTimeMs = timeMs;
  const watermarkMs = timeMs - latenessMs;
  const due = Object.keys(state.open)
    .map(Number)
    .filter((start) => start + sizeMs <= watermarkMs)
    .sort((a, b) => a - b);
  for (const start of due) {
    const byKey = state.open[start] ?? {};
    for (const slot of sortedSlots(byKey)) {
      const acc = byKey[slot];
      const result = acc === undefined ? null : toResult(keyOfSlot(slot), start, acc, true);
      if (result) out(result);
    }
    delete state.open[start];
  }
}

/** Results of open windows of `sizeMs` matching `filter`, in (window start, key) order. */
export function openWindowResults<A>(state: KeyedWindows<A>, sizeMs: number, filter: ResultFilter, toResult: ToResult<A>): WindowResult[] {
  const results: WindowResult[] = [];
  const starts = Object.keys(state.open)
    .map(Number)
    .sort((a, b) => a - b);
  for (const start of starts) {
    if (filter.toMs !== undefined && start >= filter.toMs) continue;
    if (filter.fromMs !== undefined && start + sizeMs <= filter.fromMs) continue;
    if (filter.after && start < filter.after.windowStartMs) continue;
    const byKey = state.open[start] ?? {};
    const slots = filter.key === undefined ? sortedSlots(byKey) : [slotOfKey(filter.key)];
    // Paging: the slots after the position, found by bisection in key order.
    const from = filter.key === undefined && filter.after?.windowStartMs === start ? firstAfter(slots, slotOfKey(filter.after.key)) : 0;
    for (let i = from; i < slots.length; i++) {
      const slot = slots[i] as string;
      const acc = byKey[slot];
      const key = keyOfSlot(slot);
      if (acc === undefined || (filter.after && !isAfter({ windowStartMs: start, key }, filter.after))) continue;
      const result = toResult(key, start, acc, false);
      if (!result) continue;
      results.push(result);
      if (filter.limit !== undefined && results.length >= filter.limit) return results;
    }
  }
  return results;
}

/** The (window, key) slots the open windows hold (`Operator.openEntries`). */
export function openSlotCount(state: KeyedWindows<unknown>): number {
  return Object.values(state.open).reduce((n, byKey) => n + slotsOf(byKey).length, 0);
}

/**
 * Whether `value` has the shape of {@link KeyedWindows} with every accumulator passing
 * `isAccumulator`. Plain loops rather than a schema: a checkpoint of a large partition
 * holds millions of accumulators, and a schema per entry made loading it take seconds.
 */
export function isKeyedWindows<A>(value: unknown, isAccumulator: (acc: Record<string, unknown>) => boolean): value is KeyedWindows<A> {
  if (typeof value !== "object" || value === null) return false;
  const s = value as Record<string, unknown>;
  if (!(s.maxTimeMs === null || typeof s.maxTimeMs === "number") || typeof s.lateRecords !== "number") return false;
  if (typeof s.open !== "object" || s.open === null) return false;
  for (const byKey of Object.values(s.open as Record<string, unknown>)) {
    if (typeof byKey !== "object" || byKey === null) return false;
    for (const acc of Object.values(byKey as Record<string, unknown>)) {
      if (typeof acc !== "object" || acc === null || !isAccumulator(acc as Record<string, unknown>)) return false;
    }
  }
  return true;
}
