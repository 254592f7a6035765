/**
 * Slicing for operators whose state is {@link KeyedWindows} (the built-in aggregates,
 * heavy-hitters): the head is event time and the late count; each slice holds up to N
 * (window, key) accumulators in the same `{ start: { slot: acc } }` shape as `open`.
 */
import type { KeyedWindows } from "./keyed-window-state.ts";
import type { StateSlicing } from "./state-slices.ts";
import { addSlot, openWindow, openWindowsCursor } from "./keyed-window-cursor.ts";

type Open<A> = KeyedWindows<A>["open"];

/** @param isAccumulator checks one restored accumulator. */
export function keyedWindowSlicing<A>(isAccumulator: (acc: Record<string, unknown>) => boolean): StateSlicing<KeyedWindows<A>> {
  return { split: splitWindows, fromHead: windowsFromHead, addSlice: (state, slice) => addWindowSlice(state, slice, isAccumulator), cursor: openWindowsCursor };
}

function splitWindows<A>(state: KeyedWindows<A>, perSlice: number): { head: unknown; slices: string[] } {
  const slices: string[] = [];
  let slice: Open<A> = {};
  let count = 0;
  for (const start of Object.keys(state.open)) {
    const byKey = state.open[start] ?? {};
    for (const slot of Object.keys(byKey)) {
      (slice[start] ??= {})[slot] = byKey[slot] as A;
      if (++count < perSlice) continue;
      slices.push(JSON.stringify(slice));
      slice = {};
      count = 0;
    }
  }
  if (count > 0) slices.push(JSON.stringify(slice));
  return { head: { maxTimeMs: state.maxTimeMs, lateRecords: state.lateRecords }, slices };
}

/** The state a checkpoint head describes, with no window open; throws if the head is malformed. */
export function windowsFromHead<A>(head: unknown): KeyedWindows<A> {
  const h = (typeof head === "object" && head !== null ? head : {}) as Record<string, unknown>;
  if (!(h.maxTimeMs === null || typeof h.maxTimeMs === "number") || typeof h.lateRecords !== "number") throw new Error("checkpoint head: malformed window state");
  return { maxTimeMs: h.maxTimeMs, lateRecords: h.lateRecords, open: {} };
}

/**
 * A slice's windows, every window start (`isStart`) and accumulator checked; throws if any is
 * malformed. Slots carry the `$` prefix, so none can be `__proto__`.
 */
export function checkedWindowSlice<A>(slice: unknown, isAccumulator: (acc: Record<string, unknown>) => boolean, isStart: (start: string) => boolean): Open<A> {
  if (typeof slice !== "object" || slice === null || Array.isArray(slice)) throw new Error("checkpoint slice: not an object");
  for (const [start, byKey] of Object.entries(slice as Record<string, unknown>)) {
    if (!isStart(start) || typeof byKey !== "object" || byKey === null) throw new Error(`checkpoint slice: malformed window ${start}`);
    for (const [slot, acc] of Object.entries(byKey as Record<string, unknown>)) {
      if (!slot.startsWith("$") || typeof acc !== "object" || acc === null || !isAccumulator(acc as Record<string, unknown>)) {
        throw new Error(`checkpoint slice: malformed accumulator in window ${start}`);
      }
    }
  }
  return slice as Open<A>;
}

function addWindowSlice<A>(state: KeyedWindows<A>, slice: unknown, isAccumulator: (acc: Record<string, unknown>) => boolean): void {
  const windows = checkedWindowSlice<A>(slice, isAccumulator, (start) => Number.isFinite(Number(start)));
  for (const [start, byKey] of Object.entries(windows)) {
    const into = openWindow(state, start);
    for (const [slot, acc] of Object.entries(byKey)) {
      // A slot met again (in an earlier slice) is replaced in place: it is in the slot list already.
      if (Object.hasOwn(into, slot)) into[slot] = acc;
      else addSlot(into, slot, acc);
    }
  }
}
