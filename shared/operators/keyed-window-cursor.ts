/**
 * A checkpoint of {@link KeyedWindows} (heavy-hitters' state; the built-in aggregates keep
 * columns, `aggregate-window-cursor.ts`) spread over many steps (issue 12): consistent as of
 * the moment the cursor opens, by copy-on-write at the (window, key) level. Listing a
 * million keys of an object takes ~0.5 s, so every window object keeps the list of its
 * slots in insertion order beside it (slots are only ever added to a window, and windows
 * are dropped whole), and the cursor walks the first `n` of each list, `n` being its
 * length when the cursor opened: slots added later are not part of the checkpoint. Before
 * an operator mutates an accumulator while a cursor is open it calls `keepPreimage`, which
 * keeps the accumulator's text as of the opening (once per slot, O(1)). A window closed
 * meanwhile stays reachable through the cursor, so its slots are still written.
 * The lists and cursors live in WeakMaps beside the state, which stays a plain JSON value.
 */
import type { KeyedWindows } from "./keyed-window-state.ts";
import type { SliceCursor } from "./state-slices.ts";

/** Each window object's slots in insertion order; absent for windows restored from a whole snapshot (listed on first need). */
const slotLists = new WeakMap<object, string[]>();
/** The open cursor of each state, if any. */
const cursors = new WeakMap<object, WindowsCursor>();

/** The window at `start`, created (with its slot list) if it is not open. */
export function openWindow<A>(state: KeyedWindows<A>, start: number | string): Record<string, A> {
  let byKey = state.open[start];
  if (!byKey) {
    byKey = {};
    state.open[start] = byKey;
    slotLists.set(byKey, []);
  }
  return byKey;
}

/** Adds a slot that is not in the window yet. */
export function addSlot<A>(byKey: Record<string, A>, slot: string, acc: A): void {
  byKey[slot] = acc;
  slotLists.get(byKey)?.push(slot);
}

/** Call before mutating `byKey[slot]`: while a cursor is open, keeps the slot's value as of its opening. */
export function keepPreimage<A>(state: KeyedWindows<A>, byKey: Record<string, A>, slot: string): void {
  cursors.get(state)?.keep(byKey, slot);
}

/** The slots of a window object in insertion order: the live list (copy it before reordering). */
export function slotsOf(byKey: Record<string, unknown>): string[] {
  let list = slotLists.get(byKey);
  if (!list) {
    // Restored from a whole (format 1) snapshot: listed once, kept up to date from now on.
    list = Object.keys(byKey);
    slotLists.set(byKey, list);
  }
  return list;
}

interface WindowAtOpening {
  start: string;
  byKey: Record<string, unknown>;
  /** Slots at the opening: the first `count` of the window's list. */
  count: number;
  /** Text of accumulators as of the opening, for slots mutated since. */
  preimages: Map<string, string> | null;
}

/** Opens a cursor over `state` as of now; `slices` pieces of at most `perSlice` entries follow. */
export function openWindowsCursor<A>(state: KeyedWindows<A>, perSlice: number): SliceCursor {
  cursors.get(state)?.close();
  const cursor = new WindowsCursor(state, perSlice);
  cursors.set(state, cursor);
  return cursor;
}

class WindowsCursor implements SliceCursor {
  readonly head: unknown;
  readonly slices: number;
  readonly #state: object;
  readonly #perSlice: number;
  readonly #windows: WindowAtOpening[] = [];
  readonly #byObject = new Map<object, WindowAtOpening>();
  #window = 0;
  #slot = 0;
  #closed = false;

  constructor(state: KeyedWindows<unknown>, perSlice: number) {
    this.#state = state;
    this.#perSlice = Math.max(1, perSlice);
    this.head = { maxTimeMs: state.maxTimeMs, lateRecords: state.lateRecords };
    let total = 0;
    for (const start of Object.keys(state.open)) {
      const byKey = state.open[start] ?? {};
      const at: WindowAtOpening = { start, byKey, count: slotsOf(byKey).length, preimages: new Map() };
      total += at.count;
      this.#windows.push(at);
      this.#byObject.set(byKey, at);
    }
    this.slices = Math.ceil(total / this.#perSlice);
  }

  get done(): boolean {
    return this.#window >= this.#windows.length;
  }

  keep(byKey: object, slot: string): void {
    const at = this.#byObject.get(byKey);
    if (!at?.preimages || at.preimages.has(slot)) return;
    const acc = (byKey as Record<string, unknown>)[slot];
    // Absent: a slot added after the opening, which the checkpoint does not hold.
    if (acc !== undefined) at.preimages.set(slot, JSON.stringify(acc));
  }

  next(): string | null {
    if (this.#closed) throw new Error("checkpoint cursor: closed");
    let text = "";
    let taken = 0;
    while (taken < this.#perSlice && !this.done) {
      const at = this.#windows[this.#window] as WindowAtOpening;
      const slots = slotsOf(at.byKey);
      const entries: string[] = [];
      for (; this.#slot < at.count && taken < this.#perSlice; this.#slot++, taken++) {
        const slot = slots[this.#slot] as string;
        entries.push(`${JSON.stringify(slot)}:${at.preimages?.get(slot) ?? JSON.stringify(at.byKey[slot])}`);
      }
      if (entries.length > 0) text += `${text === "" ? "" : ","}${JSON.stringify(at.start)}:{${entries.join(",")}}`;
      if (this.#slot < at.count) break;
      // Written whole: nothing of this window is needed any more.
      at.preimages = null;
      this.#byObject.delete(at.byKey);
      this.#window += 1;
      this.#slot = 0;
    }
    return taken === 0 ? null : `{${text}}`;
  }

  close(): void {
    this.#closed = true;
    if (cursors.get(this.#state) === this) cursors.delete(this.#state);
    this.#byObject.clear();
  }
}
