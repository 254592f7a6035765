/** Looking accumulators up by key beside a window (`windowKeys`, issue 12): in step with the window object, which stays the state. */
import { describe, expect, it } from "vitest";
import { openWindowsCursor, replaceSlot, windowKeys } from "../../shared/operators/keyed-window-cursor.ts";
import type { KeyedWindows } from "../../shared/operators/keyed-windows.ts";

type Acc = { n: number };
const restored = (): KeyedWindows<Acc> => JSON.parse('{"maxTimeMs":10,"lateRecords":0,"open":{"0":{"$a":{"n":2},"$b":{"n":5}}}}') as KeyedWindows<Acc>;

describe("windowKeys", () => {
  it("finds the accumulators of a window restored whole, as the window object holds them", () => {
    const state = restored();
    const keys = windowKeys(state, 0);
    expect(keys.forUpdate("a")).toBe(state.open[0]?.$a);
    expect(keys.forUpdate("b")).toEqual({ n: 5 });
    expect(keys.forUpdate("c")).toBeUndefined();
  });

  it("adds a key to the window object under its `$` slot, found by later calls", () => {
    const state = restored();
    windowKeys(state, 0).add("c", { n: 1 });
    windowKeys(state, 60).add("__proto__", { n: 7 });
    expect(JSON.stringify(state.open)).toBe('{"0":{"$a":{"n":2},"$b":{"n":5},"$c":{"n":1}},"60":{"$__proto__":{"n":7}}}');
    expect(windowKeys(state, 0).forUpdate("c")).toEqual({ n: 1 });
    expect(windowKeys(state, 60).forUpdate("__proto__")).toEqual({ n: 7 });
    expect(windowKeys(state, 60).forUpdate("constructor")).toBeUndefined();
  });

  it("finds the new accumulator of a slot replaced after it was looked up", () => {
    const state = restored();
    expect(windowKeys(state, 0).forUpdate("a")).toEqual({ n: 2 });
    replaceSlot(state.open[0] as Record<string, Acc>, "$a", { n: 9 });
    expect(windowKeys(state, 0).forUpdate("a")).toEqual({ n: 9 });
  });

  it("keeps the value as of the opening of a cursor for an accumulator taken for update", () => {
    const state = restored();
    const cursor = openWindowsCursor(state, 10);
    const acc = windowKeys(state, 0).forUpdate("a") as Acc;
    acc.n += 40;
    windowKeys(state, 0).add("c", { n: 1 });
    expect(cursor.next()).toBe('{"0":{"$a":{"n":2},"$b":{"n":5}}}');
    expect(state.open[0]?.$a).toEqual({ n: 42 });
    cursor.close();
  });
});
