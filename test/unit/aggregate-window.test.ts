/**
 * The window-aggregate state by column (issue 12, `aggregate-window.ts`): a key costs about
 * one heap object, rows survive the columns growing, and a checkpoint cursor keeps rows as
 * of its opening while later records change them.
 */
import { getHeapSnapshot } from "node:v8";
import { describe, expect, it } from "vitest";
import { compileDataflow } from "../../shared/operators/compile.ts";
import type { LiveOperator } from "../../shared/operators/operator.ts";
import type { FluxRecord } from "../../shared/wire/window-result.ts";
import { spec } from "../helpers/fixtures.ts";

/** count, sum, min, max, avg of `bytes` over 1 s tumbling windows, closed as soon as event time passes them. */
const SPEC = spec({ window: { kind: "tumbling", sizeMs: 1000, allowedLatenessMs: 0 } });

/** Heap objects alive now (nodes of a heap snapshot, read from its opening). */
async function heapObjects(): Promise<number> {
  let text = "";
  for await (const chunk of getHeapSnapshot()) {
    text += String(chunk);
    const count = /"node_count":(\d+)/.exec(text);
    if (count) return Number(count[1]);
  }
  throw new Error("heap snapshot without node_count");
}

/**
 * A live operator fed records parsed from a log entry's text. Not inline in an async test:
 * a value held in a register across an `await` stays alive in the suspended frame.
 */
function fedFromLog(text: string, live: LiveOperator = compileDataflow(SPEC).bind()): LiveOperator {
  live.process(JSON.parse(text) as FluxRecord[], () => {});
  return live;
}

/** Every slice a cursor gives, in order. */
function drain(cursor: ReturnType<LiveOperator["cursor"]>): string[] {
  const slices: string[] = [];
  for (let slice = cursor?.next() ?? null; slice !== null; slice = cursor?.next() ?? null) slices.push(slice);
  return slices;
}

describe("the window-aggregate state", () => {
  it("holds a key's aggregates in under two heap objects (the object-per-key state took about seven)", async () => {
    const keys = 20_000;
    const text = JSON.stringify(Array.from({ length: keys }, (_, k): FluxRecord => [`key-${k}`, 10, k % 7]));
    const before = await heapObjects();
    const live = fedFromLog(text);
    const after = await heapObjects();
    expect(live.openResults({ limit: 1 })).toHaveLength(1);
    expect((after - before) / keys).toBeLessThan(2);
  });

  it("keeps the rows a cursor has yet to write, changed meanwhile, without a heap object per row", async () => {
    const keys = 20_000;
    const text = JSON.stringify(Array.from({ length: keys }, (_, k): FluxRecord => [`key-${k}`, 10, k % 7]));
    const live = fedFromLog(text);
    const cursor = live.cursor(1_000);
    const before = await heapObjects();
    fedFromLog(text, live);
    const after = await heapObjects();
    expect((after - before) / keys).toBeLessThan(0.1);
    // As of the opening: every key counted once.
    const slices = drain(cursor);
    expect(slices).toHaveLength(20);
    expect(slices.every((slice) => !slice.includes('"n":2'))).toBe(true);
    // Row for row, across the blocks the preimages are kept in: what a state fed once writes.
    expect(slices).toEqual(drain(fedFromLog(text).cursor(1_000)));
    expect(live.openResults({ limit: 1 })[0]?.values.n).toBe(2);
  });

  it("keeps every row's values as the columns grow, keys that are prototype names included", () => {
    const live = compileDataflow(SPEC).bind();
    const keys = ["__proto__", "constructor", "toString", ...Array.from({ length: 1_000 }, (_, k) => `k${k}`)];
    live.process(
      keys.map((key, k): FluxRecord => [key, 10, k + 1]),
      () => {},
    );
    live.process(
      keys.map((key, k): FluxRecord => [key, 20, k]),
      () => {},
    );
    const results = live.openResults({});
    expect(results).toHaveLength(keys.length);
    for (const r of results) {
      const k = keys.indexOf(r.key);
      expect(r.values, r.key).toEqual({ n: 2, bytes: 2 * k + 1, lo: k, hi: k + 1, mean: k + 0.5 });
    }
  });

  it("writes, through a cursor, every row as of its opening while records change, add and close rows", () => {
    const live = compileDataflow(SPEC).bind();
    live.process([["a", 10, 1], ["b", 20, 2], ["c", 1_010, 3]], () => {});
    const asOfOpening = drain(live.cursor(1));
    const cursor = live.cursor(1);
    live.process([["a", 30, 5], ["d", 40, 1], ["c", 1_020, 4]], () => {});
    const first = cursor?.next();
    // Closes window 0 (b and a) before the cursor reached it whole.
    live.process([["e", 5_000, 1], ["b", 50, 9]], () => {});
    expect([first, ...drain(cursor)]).toEqual(asOfOpening);
    expect(live.openResults({}).map((r) => r.key)).toEqual(["e"]);
  });

  it("keeps a later cursor's rows as of its opening when an earlier cursor is closed again", () => {
    const live = compileDataflow(SPEC).bind();
    live.process([["a", 10, 1], ["b", 20, 2]], () => {});
    const earlier = live.cursor(1);
    const later = live.cursor(1);
    const asOfLater = drain(live.cursor(1));
    const again = live.cursor(1);
    // The runtime closes a spread checkpoint's cursor when it cancels it, even if a newer one replaced it.
    later?.close();
    earlier?.close();
    live.process([["a", 30, 5], ["b", 40, 5]], () => {});
    expect(drain(again)).toEqual(asOfLater);
  });
});
