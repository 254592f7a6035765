/**
 * Moving keys' state of the window aggregate between partitions (issue 28,
 * `aggregate-window-moves.ts`): two partitions that hand key groups to each other while
 * records arrive give, once every window has closed, exactly the results one operator fed
 * everything gives: no (window, key) emitted twice, none lost, sketches included.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileDataflow } from "../../shared/operators/compile.ts";
import type { LiveOperator } from "../../shared/operators/operator.ts";
import { keyGroupOf } from "../../shared/keygroups/key-groups.ts";
import type { FluxRecord, WindowResult } from "../../shared/wire/window-result.ts";
import type { DataflowSpec } from "../../shared/wire/dataflow-spec.ts";
import { spec } from "../helpers/fixtures.ts";

const GROUPS = 8;
const TUMBLING = spec({ window: { kind: "tumbling", sizeMs: 1000, allowedLatenessMs: 300 } });
const SLIDING = spec({
  window: { kind: "sliding", sizeMs: 1000, slideMs: 250, allowedLatenessMs: 300 },
  aggregates: { n: { op: "count" }, bytes: { op: "sum", field: "bytes" }, users: { op: "distinct", field: "user" }, top: { op: "topk", field: "user", k: 2 } },
});

/** The heavy-hitters operator (per-key windows of its own, `keyed-window-moves.ts`): every source alerts, so every key reports. */
const HEAVY = spec({
  window: undefined,
  aggregates: undefined,
  operator: { name: "heavy-hitters", params: { windowMs: 1000, allowedLatenessMs: 300, bytesField: "bytes", destinationField: "dst", minDestinations: 1 } },
});

/** A record for `spec`: `[key, timeMs, bytes]`, plus the user for the sketches of `SLIDING` or the destination of `HEAVY`. */
const recordFor = (s: DataflowSpec, key: string, timeMs: number, bytes: number): FluxRecord =>
  s === SLIDING || s === HEAVY ? [key, timeMs, bytes, `u${bytes % 3}`] : [key, timeMs, bytes];

/** Results by (window, key), failing on one emitted twice. */
function collect(into: Map<string, WindowResult>): (r: WindowResult) => void {
  return (r) => {
    const id = `${r.windowStartMs}/${r.key}`;
    if (into.has(id)) throw new Error(`${id} emitted twice`);
    into.set(id, r);
  };
}

/**
 * A step: records, each `[key, advance, lag, bytes]` (the clock advances, the record's time
 * lags it), the most results the two partitions may close in it (a close spread over
 * steps), or a move of one group to the other partition.
 */
type Step = { kind: "records"; records: [string, number, number, number][]; limit: number | undefined } | { kind: "move"; group: number };

/** Steps whose records advance the clock by at most `maxAdvance` ms and lag it by at most `maxLag` ms. */
const steps = (maxAdvance: number, maxLag: number) =>
  fc.array(
    fc.oneof(
      {
        weight: 4,
        arbitrary: fc
          .record({
            records: fc.array(fc.tuple(fc.constantFrom("a", "b", "c", "d", "e", "f", "g", "h"), fc.noBias(fc.integer({ min: 0, max: maxAdvance })), fc.noBias(fc.integer({ min: 0, max: maxLag })), fc.integer({ min: 0, max: 50 })), { maxLength: 6, size: "max" }),
            limit: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
            focus: fc.boolean(),
          })
          // A focused step gives every record the first one's key, so one partition runs ahead of the other.
          .map(({ records, limit, focus }): Step => ({ kind: "records", records: focus ? records.map(([, ...rest]) => [records[0]?.[0] ?? "a", ...rest]) : records, limit })),
      },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: GROUPS - 1 }).map((group): Step => ({ kind: "move", group })) },
    ),
    { maxLength: 40, size: "max" },
  );

/**
 * Feeds `plan` to one operator and to two that own groups by `owner` and move them; returns
 * both result maps once everything closed, and the records each side dropped as late.
 */
function run(s: DataflowSpec, plan: readonly Step[]): { single: Map<string, WindowResult>; moved: Map<string, WindowResult>; late: [number, number]; records: number } {
  const single = new Map<string, WindowResult>();
  const moved = new Map<string, WindowResult>();
  const one = compileDataflow(s).bind();
  const pair: LiveOperator[] = [compileDataflow(s).bind(), compileDataflow(s).bind()];
  const owner = Array.from({ length: GROUPS }, (_, g) => g % 2);
  let clock = 0;
  let count = 0;
  for (const step of plan) {
    if (step.kind === "move") {
      const from = owner[step.group] as number;
      const taken = (pair[from] as LiveOperator).take((key) => keyGroupOf(key, GROUPS) === step.group);
      // Through JSON, as storage and the RPC carry it.
      (pair[1 - from] as LiveOperator).adopt(JSON.parse(JSON.stringify(taken)), collect(moved));
      owner[step.group] = 1 - from;
      continue;
    }
    const records = step.records.map(([key, advance, lag, bytes]) => recordFor(s, key, Math.max(0, (clock += advance) - lag), bytes));
    count += records.length;
    one.process(records, collect(single));
    for (const p of [0, 1]) (pair[p] as LiveOperator).process(records.filter((r) => owner[keyGroupOf(r[0], GROUPS)] === p), collect(moved), step.limit);
  }
  const end = clock + 10_000;
  one.tick(end, collect(single));
  for (const live of pair) live.tick(end, collect(moved));
  return { single, moved, late: [pair[0]?.lateRecords() ?? 0, pair[1]?.lateRecords() ?? 0], records: count };
}

describe("moving keys of the window aggregate", () => {
  for (const [name, s] of [["tumbling count, sum, min, max, avg", TUMBLING], ["sliding, with distinct and top-k sketches", SLIDING], ["heavy-hitters", HEAVY]] as const) {
    it(`two partitions handing groups back and forth give one operator's results (${name})`, () => {
      fc.assert(
        fc.property(steps(40, 240), (plan) => {
          // Records lag by less than the allowed lateness: none is late anywhere, so partitions and moves change nothing.
          const { single, moved, late } = run(s, plan);
          expect(late).toEqual([0, 0]);
          expect(new Map([...moved].sort())).toEqual(new Map([...single].sort()));
        }),
        { numRuns: 300 },
      );
    });
  }

  for (const [s, count] of [
    [TUMBLING, "n"],
    [HEAVY, "packets"],
  ] as const) {
    it(`with records later than the lateness, a move never reopens a closed window and every record is counted once or late (${count})`, () => {
      fc.assert(
        fc.property(steps(400, 1500), (plan) => {
          // `collect` throws on a (window, key) emitted twice; tumbling windows count each record in one window.
          const { moved, late, records } = run(s, plan);
          const counted = [...moved.values()].reduce((n, r) => n + (r.values[count] as number), 0);
          expect(counted + late[0] + late[1]).toBe(records);
        }),
        { numRuns: 2000 },
      );
    });
  }

  it("a window due at the source stays there; adopting raises the target's event time and closes what that makes due", () => {
    const source = compileDataflow(TUMBLING).bind();
    const target = compileDataflow(TUMBLING).bind();
    const fromSource: WindowResult[] = [];
    const fromTarget: WindowResult[] = [];
    // Source: event time 2,600, so window [1000, 2000) is due (2,000 ≤ 2,600 - 300) but held back by a close limit of 0; [2000, 3000) is open.
    source.process([["x", 1500, 1], ["x", 2500, 2], ["y", 2600, 3]], (r) => fromSource.push(r), 0);
    expect(source.closing()).toBe(true);
    target.process([["z", 100, 4]], (r) => fromTarget.push(r));
    const taken = source.take(() => true);
    // The due window stayed: its close goes on at the source.
    source.process([], (r) => fromSource.push(r));
    expect(fromSource.map((r) => [r.key, r.windowStartMs])).toEqual([["x", 1000]]);
    expect(source.openResults({})).toEqual([]);
    target.adopt(taken, (r) => fromTarget.push(r));
    expect(target.watermarkMs()).toBe(2300);
    // The target's own window [0, 1000) is due by the raised event time: the next call closes it.
    expect(fromTarget).toEqual([]);
    target.process([], (r) => fromTarget.push(r));
    expect(fromTarget.map((r) => [r.key, r.windowStartMs])).toEqual([["z", 0]]);
    expect(target.openResults({}).map((r) => [r.key, r.windowStartMs, r.values.n])).toEqual([
      ["x", 2000, 1],
      ["y", 2000, 1],
    ]);
  });

  it("a taken window already due at the target is emitted by the adopt", () => {
    const source = compileDataflow(TUMBLING).bind();
    const target = compileDataflow(TUMBLING).bind();
    source.process([["x", 500, 7]], () => {});
    target.process([["z", 5000, 1]], () => {});
    const out: WindowResult[] = [];
    target.adopt(source.take((key) => key === "x"), (r) => out.push(r));
    expect(out).toEqual([{ key: "x", windowStartMs: 0, windowEndMs: 1000, values: { n: 1, bytes: 7, lo: 7, hi: 7, mean: 7 }, closed: true }]);
    expect(target.openResults({}).map((r) => r.key)).toEqual(["z"]);
  });

  it("heavy-hitters: adopting closes at once every window the raised event time made due, adopted or its own", () => {
    const source = compileDataflow(HEAVY).bind();
    const target = compileDataflow(HEAVY).bind();
    source.process([["x", 500, 7, "d"], ["x", 2600, 1, "d"]], () => {});
    target.process([["z", 100, 1, "d"]], () => {});
    const out: WindowResult[] = [];
    target.adopt(source.take(() => true), (r) => out.push(r));
    expect(out.map((r) => [r.key, r.windowStartMs])).toEqual([["z", 0]]);
    expect(target.openResults({}).map((r) => [r.key, r.windowStartMs])).toEqual([["x", 2000]]);
    expect(source.openResults({})).toEqual([]);
  });

  it("keeps the keys left, survives a checkpoint, and aborts a checkpoint cursor open over the old state", () => {
    const live = compileDataflow(TUMBLING).bind();
    live.process([["a", 10, 1], ["b", 20, 2], ["c", 30, 3]], () => {});
    const cursor = live.cursor(1);
    live.take((key) => key === "b");
    expect(cursor?.aborted).toBe(true);
    expect(live.openResults({}).map((r) => r.key)).toEqual(["a", "c"]);
    const restored = compileDataflow(TUMBLING).bind(JSON.parse(JSON.stringify(live.snapshot())));
    expect(restored.openResults({})).toEqual(live.openResults({}));
  });

  it("refuses moved state that is malformed or holds a key already held", () => {
    const live = compileDataflow(TUMBLING).bind();
    live.process([["a", 10, 1]], () => {});
    expect(() => live.adopt({ maxTimeMs: 0, lateRecords: 0, open: { x: {} } }, () => {})).toThrow(/malformed moved state/);
    expect(() => live.adopt({ maxTimeMs: 0 }, () => {})).toThrow(/malformed moved state/);
    const other = compileDataflow(TUMBLING).bind();
    other.process([["a", 20, 2]], () => {});
    expect(() => live.adopt(other.take(() => true), () => {})).toThrow(/"a" is already held in window 0/);
  });
});
