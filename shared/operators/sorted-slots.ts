/**
 * Each window's slots in key order (UTF-16 code units, the order results are emitted and
 * served in), kept beside the window like its insertion-ordered list
 * (`keyed-window-cursor.ts`; issue 12). Sorting a million keys takes about a second, and
 * listing them with `Object.keys` another half: closing a window, or serving its open
 * results page after page, used to do both every time. Slots are only ever added to a
 * window, so the sorted copy stays valid for the first `count` slots of the list; the
 * slots added since are sorted on their own and merged in.
 */
import { slotsOf } from "./keyed-window-cursor.ts";

interface SortedSlots {
  slots: readonly string[];
  /** How many slots of the window's list `slots` holds: its first `count`. */
  count: number;
}

const sortedLists = new WeakMap<object, SortedSlots>();

/** The slots of a window object in key order (do not modify the array). */
export function sortedSlots(byKey: Record<string, unknown>): readonly string[] {
  const list = slotsOf(byKey);
  const known = sortedLists.get(byKey);
  if (known && known.count === list.length) return known.slots;
  // Plain `sort()` compares strings by UTF-16 code units; slots are distinct.
  const added = list.slice(known?.count ?? 0).sort();
  const slots = known ? mergeSorted(known.slots, added) : added;
  sortedLists.set(byKey, { slots, count: list.length });
  return slots;
}

/** Two ascending lists of distinct strings merged into one (UTF-16 code unit order, as `sort()`). */
export function mergeSorted(a: readonly string[], b: readonly string[]): string[] {
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push((a[i] as string) < (b[j] as string) ? (a[i++] as string) : (b[j++] as string));
  while (i < a.length) out.push(a[i++] as string);
  while (j < b.length) out.push(b[j++] as string);
  return out;
}
