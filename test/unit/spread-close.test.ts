/**
 * A window's close spread over calls (issue 12, `aggregate-windows.ts` closeDue): with a
 * close limit the operator emits the same results in the same order as one unlimited
 * close, at most `limit` per call; keys already emitted are not open results any more;
 * records for a window being closed are late; a checkpoint mid-close carries on.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { compileDataflow } from "../../shared/operators/compile.ts";
import type { LiveOperator } from "../../shared/operators/operator.ts";
import type { FluxRecord, WindowResult } from "../../shared/wire/window-result.ts";
import { spec } from "../helpers/fixtures.ts";
import { rng } from "../helpers/rng.ts";

const SPEC = spec({ window: { kind: "sliding", sizeMs: 1000, slideMs: 500, allowedLatenessMs: 0 } });
const KEYS = Array.from({ length: 23 }, (_, i) => `k${(i * 7) % 23}`);
/** 23 keys in windows 0 and 500, then one record that closes both. */
const FILL: FluxRecord[] = KEYS.map((key, i) => [key, 600 + i, i]);
const CLOSER: FluxRecord[] = [["late-closer", 2_600, 1]];

function closedAtOnce(): WindowResult[] {
  const live = compileDataflow(SPEC).bind();
  const out: WindowResult[] = [];
  live.process(FILL, (r) => out.push(r));
  live.process(CLOSER, (r) => out.push(r));
  return out;
}

/** Feeds FILL and CLOSER with `limit`, then empty calls until the close is done; results per call. */
function spread(live: LiveOperator, limit: number): WindowResult[][] {
  const calls: WindowResult[][] = [];
  const call = (records: FluxRecord[]) => {
    const out: WindowResult[] = [];
    live.process(records, (r) => out.push(r), limit);
    calls.push(out);
  };
  call(FILL);
  call(CLOSER);
  while (live.closing()) call([]);
  return calls;
}

describe("a close spread over calls", () => {
  it("emits the results of one whole close, in the same order, at most `limit` per call", () => {
    const whole = closedAtOnce();
    expect(whole).toHaveLength(46);
    const live = compileDataflow(SPEC).bind();
    const calls = spread(live, 5);
    expect(calls.flat()).toEqual(whole);
    expect(calls.map((c) => c.length)).toEqual([0, 5, 5, 5, 5, 5, 5, 5, 5, 5, 1]);
    expect(live.closing()).toBe(false);
  });

  it("closes a window of fewer keys than the limit in one call, as without a limit", () => {
    const live = compileDataflow(SPEC).bind();
    expect(spread(live, 46).map((c) => c.length)).toEqual([0, 46]);
  });

  it("serves only the keys not emitted yet as open results, point reads included", () => {
    const live = compileDataflow(SPEC).bind();
    live.process(FILL, () => {}, 10);
    const emitted: WindowResult[] = [];
    live.process(CLOSER, (r) => emitted.push(r), 10);
    expect(live.closing()).toBe(true);
    const open = live.openResults({ toMs: 1000 });
    const id = (r: WindowResult) => `${r.windowStartMs}/${r.key}`;
    expect(open.filter((r) => emitted.some((e) => id(e) === id(r)))).toEqual([]);
    expect(open.length + emitted.length).toBe(46);
    expect(live.openResults({ key: emitted[0]?.key ?? "", toMs: 500 })).toEqual([]);
    const last = open[open.length - 1];
    expect(live.openResults({ key: last?.key ?? "", fromMs: 1000 })).toEqual([last]);
    // Paging after a key already emitted starts at the first key still open.
    expect(live.openResults({ after: { windowStartMs: 0, key: "" }, limit: 1 })).toEqual(open.slice(0, 1));
  });

  it("counts records for a window being closed as late, as a whole close does", () => {
    const lateOf = (limit: number | undefined) => {
      const live = compileDataflow(SPEC).bind();
      live.process(FILL, () => {}, limit);
      live.process(CLOSER, () => {}, limit);
      live.process([["k1", 700, 1], ["k2", 2_200, 1]], () => {}, limit);
      return live.lateRecords();
    };
    expect(lateOf(3)).toBe(1);
    expect(lateOf(undefined)).toBe(1);
  });

  it("goes on from where it was after a checkpoint taken mid-close, sliced or whole", () => {
    const whole = closedAtOnce();
    const compiled = compileDataflow(SPEC);
    for (const restore of ["sliced", "whole"] as const) {
      const live = compiled.bind();
      const before: WindowResult[] = [];
      live.process(FILL, () => {}, 7);
      live.process(CLOSER, (r) => before.push(r), 7);
      live.process([], (r) => before.push(r), 7);
      let restored: LiveOperator;
      if (restore === "whole") restored = compiled.bind(JSON.parse(JSON.stringify(live.snapshot())));
      else {
        const { head, slices } = live.split(4);
        const rebuilt = compiled.restoreSliced(JSON.parse(JSON.stringify(head)), true);
        for (const slice of slices) rebuilt.add(JSON.parse(slice));
        restored = rebuilt.finish();
      }
      expect(restored.closing()).toBe(true);
      const after: WindowResult[] = [];
      while (restored.closing()) restored.process([], (r) => after.push(r), 7);
      expect([...before, ...after]).toEqual(whole);
    }
  });
});

describe("a large window's spread close", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("never sorts the whole window in one step, and still closes it in key order", () => {
    const keys = rng(7).shuffle(Array.from({ length: 40_000 }, (_, i) => `k${i}`));
    const whole = compileDataflow(SPEC).bind();
    const live = compileDataflow(SPEC).bind();
    const expected: WindowResult[] = [];
    const got: WindowResult[] = [];
    for (let from = 0; from < keys.length; from += 5_000) {
      const records = keys.slice(from, from + 5_000).map((k): FluxRecord => [k, 600, 1]);
      whole.process(records, (r) => expected.push(r));
      live.process(records, (r) => got.push(r), 7_000);
    }
    const sorted: number[] = [];
    const sort = Array.prototype.sort;
    vi.spyOn(Array.prototype, "sort").mockImplementation(function (this: unknown[], compare) {
      sorted.push(this.length);
      return sort.call(this, compare);
    });
    live.process(CLOSER, (r) => got.push(r), 7_000);
    while (live.closing()) live.process([], (r) => got.push(r), 7_000);
    vi.restoreAllMocks();
    whole.process(CLOSER, (r) => expected.push(r));
    expect(got).toEqual(expected);
    expect(got).toHaveLength(80_000);
    expect(Math.max(...sorted)).toBeLessThan(20_000);
  });
});
