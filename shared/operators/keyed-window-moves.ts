/**
 * Moving keys of an operator kept as per-key event-time windows (`keyed-windows.ts`, e.g.
 * heavy-hitters) between partitions (issue 28), by the rules of the window aggregate's
 * (`aggregate-window-moves.ts`): a window due at the source stays there, adopting raises
 * the target's event time to the source's, and a taken window due at the target is
 * emitted at once. Accumulators travel as the JSON values checkpoints hold.
 */
import type { WindowResult } from "../wire/window-result.ts";
import type { Emit, KeyMoves } from "./operator.ts";
import type { KeyedWindows } from "./keyed-window-state.ts";
import { addSlot, openWindow, slotsOf } from "./keyed-window-cursor.ts";
import { isKeyedWindows, type ToResult } from "./keyed-windows.ts";
import { sortedSlots } from "./sorted-slots.ts";
import { isWindowStart } from "./aggregate-windows.ts";

/** Key moves for windows of `sizeMs` with `latenessMs` of allowed lateness. */
export function keyedWindowMoves<A>(sizeMs: number, latenessMs: number, isAccumulator: (acc: Record<string, unknown>) => boolean, toResult: ToResult<A>): KeyMoves<KeyedWindows<A>> {
  const dueAt = (state: { maxTimeMs: number | null }, start: number): boolean => state.maxTimeMs !== null && start + sizeMs <= state.maxTimeMs - latenessMs;
  return {
    take(state, belongs) {
      const taken: KeyedWindows<A> = { maxTimeMs: state.maxTimeMs, lateRecords: 0, open: {} };
      // A new state object: a checkpoint cursor open over the old one is aborted, not misled.
      const left: KeyedWindows<A> = { maxTimeMs: state.maxTimeMs, lateRecords: state.lateRecords, open: {} };
      for (const start of Object.keys(state.open)) {
        const byKey = state.open[start] as Record<string, A>;
        const slots = slotsOf(byKey);
        const moving = dueAt(state, Number(start)) ? [] : slots.filter((slot) => belongs(slot.slice(1)));
        if (moving.length === 0) {
          left.open[start] = byKey;
          continue;
        }
        const out: Record<string, A> = (taken.open[start] = {});
        for (const slot of moving) out[slot] = byKey[slot] as A;
        if (moving.length === slots.length) continue;
        const kept = openWindow(left, start);
        const gone = new Set(moving);
        for (const slot of slots) if (!gone.has(slot)) addSlot(kept, slot, byKey[slot] as A);
      }
      return { state: left, taken };
    },

    adopt(state, value, out: Emit<WindowResult>) {
      if (!isKeyedWindows<A>(value, isAccumulator) || !Object.entries(value.open).every(([start, byKey]) => isWindowStart(start) && Object.keys(byKey).every((slot) => slot.startsWith("$")))) {
        throw new Error("keyed windows: malformed moved state");
      }
      if (value.maxTimeMs !== null && (state.maxTimeMs === null || value.maxTimeMs > state.maxTimeMs)) state.maxTimeMs = value.maxTimeMs;
      for (const start of Object.keys(value.open)) {
        const byKey = value.open[start] as Record<string, A>;
        const window = openWindow(state, start);
        for (const slot of Object.keys(byKey)) {
          if (Object.hasOwn(window, slot)) throw new Error(`keyed windows: adopted key ${JSON.stringify(slot.slice(1))} is already held in window ${start}`);
          addSlot(window, slot, byKey[slot] as A);
        }
      }
      // Everything due by the (raised) event time closes now, adopted or not: these windows close only as event time rises.
      const due = Object.keys(state.open)
        .map(Number)
        .filter((start) => dueAt(state, start))
        .sort((a, b) => a - b);
      for (const start of due) {
        const byKey = state.open[start] as Record<string, A>;
        for (const slot of sortedSlots(byKey)) {
          const result = toResult(slot.slice(1), start, byKey[slot] as A, true);
          if (result) out(result);
        }
        delete state.open[start];
      }
      return state;
    },
  };
}
