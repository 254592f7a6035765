/**
 * The windowed join (issue 27) against a naive reference: inner and left joins, values of
 * a side without results, late results per side, snapshot and restore mid-window, open
 * results; and the spec rules a join must follow.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DataflowSpecSchema } from "../../shared/dataflow-checks/dataflow-spec-schema.ts";
import { compileDataflow } from "../../shared/operators/compile.ts";
import { routeOutputs } from "../../shared/exchange/route-outputs.ts";
import type { DataflowSpec } from "../../shared/wire/dataflow-spec.ts";
import { compareResults, type FluxRecord, type WindowResult } from "../../shared/wire/window-result.ts";
import { defaultKeyGroupMap } from "../../shared/keygroups/key-groups.ts";

const WINDOW_MS = 100;

function joinSpec(kind: "inner" | "left"): DataflowSpec {
  return DataflowSpecSchema.parse({
    from: ["clicks", "profiles"],
    key: "key",
    window: { kind: "tumbling", sizeMs: WINDOW_MS },
    join: { kind, left: { clicks: { op: "sum", field: "values.n" }, pages: { op: "count" } }, right: { tier: { op: "max", field: "values.tier" } } },
    partitions: 1,
  });
}

/** A side's record as routing builds it: `[key, timeMs, side, ...fields]` (left: values.n; right: values.tier). */
const leftRecord = (key: string, timeMs: number, n: number): FluxRecord => [key, timeMs, 0, n];
const rightRecord = (key: string, timeMs: number, tier: number): FluxRecord => [key, timeMs, 1, tier];

function run(spec: DataflowSpec, steps: readonly ({ records: FluxRecord[] } | { tickMs: number })[], snapshotAt = -1) {
  let operator = compileDataflow(spec).bind();
  const out: WindowResult[] = [];
  steps.forEach((step, i) => {
    if (i === snapshotAt) operator = compileDataflow(spec).bind(JSON.parse(JSON.stringify(operator.snapshot())));
    if ("records" in step) operator.process(step.records, (r) => void out.push(r));
    else operator.tick(step.tickMs, (r) => void out.push(r));
  });
  return { out, operator };
}

/** The naive reference: per (window, key) and side, sum/count/max of what arrived before the window closed. */
function reference(kind: "inner" | "left", steps: readonly ({ records: FluxRecord[] } | { tickMs: number })[]): WindowResult[] {
  const sides = [new Map<string, { n: number; count: number }>(), new Map<string, { tier: number }>()] as const;
  let closedThrough = Number.NEGATIVE_INFINITY;
  let late = 0;
  const out: WindowResult[] = [];
  const start = (t: number) => Math.floor(t / WINDOW_MS) * WINDOW_MS;
  for (const step of steps) {
    if ("records" in step) {
      for (const [key, t, side, v] of step.records) {
        const s = start(t);
        if (s + WINDOW_MS <= closedThrough) {
          late += 1;
          continue;
        }
        const id = `${s}|${key}`;
        if (side === 0) {
          const held = sides[0].get(id) ?? { n: 0, count: 0 };
          sides[0].set(id, { n: held.n + Number(v), count: held.count + 1 });
        } else sides[1].set(id, { tier: Math.max(sides[1].get(id)?.tier ?? Number.NEGATIVE_INFINITY, Number(v)) });
      }
      continue;
    }
    if (step.tickMs <= closedThrough) continue;
    closedThrough = step.tickMs;
    const due = [...new Set([...sides[0].keys(), ...sides[1].keys()])].filter((id) => Number(id.split("|")[0]) + WINDOW_MS <= closedThrough);
    const emitted: WindowResult[] = [];
    for (const id of due) {
      const [s, key = ""] = id.split("|");
      const l = sides[0].get(id);
      const r = sides[1].get(id);
      sides[0].delete(id);
      sides[1].delete(id);
      if (!l || (kind === "inner" && !r)) continue;
      const windowStartMs = Number(s);
      emitted.push({ key, windowStartMs, windowEndMs: windowStartMs + WINDOW_MS, values: { clicks: l.n, pages: l.count, tier: r ? r.tier : null }, closed: true });
    }
    out.push(...emitted.sort(compareResults));
  }
  expect(late).toBeGreaterThanOrEqual(0);
  return out;
}

describe("windowed join", () => {
  it("joins per key and window when both sides had results (inner), on the window's close only", () => {
    const steps = [
      { records: [leftRecord("u1", 10, 3), leftRecord("u1", 60, 2), leftRecord("u2", 20, 1), rightRecord("u1", 99, 2)] },
      { records: [rightRecord("u3", 50, 1), leftRecord("u1", 150, 7)] },
      { tickMs: 100 },
    ];
    const { out, operator } = run(joinSpec("inner"), steps);
    expect(out).toEqual([{ key: "u1", windowStartMs: 0, windowEndMs: 100, values: { clicks: 5, pages: 2, tier: 2 }, closed: true }]);
    expect(operator.openResults({})).toEqual([]);
  });

  it("keeps every left key in a left join, the right side's values those of no results", () => {
    const { out } = run(joinSpec("left"), [{ records: [leftRecord("u2", 20, 1), leftRecord("u1", 30, 4), rightRecord("u1", 40, 9)] }, { tickMs: 100 }]);
    expect(out.map((r) => [r.key, r.values])).toEqual([
      ["u1", { clicks: 4, pages: 1, tier: 9 }],
      ["u2", { clicks: 1, pages: 1, tier: null }],
    ]);
  });

  it("shows open windows joined the same way, and counts a result for a closed window as late on its side", () => {
    const { out, operator } = run(joinSpec("inner"), [{ records: [leftRecord("a", 10, 1), rightRecord("a", 20, 5)] }, { tickMs: 100 }, { records: [rightRecord("a", 30, 6), leftRecord("b", 120, 2), rightRecord("b", 130, 1)] }]);
    expect(out).toHaveLength(1);
    expect(operator.lateRecords()).toBe(1);
    expect(operator.openResults({})).toEqual([{ key: "b", windowStartMs: 100, windowEndMs: 200, values: { clicks: 2, pages: 1, tier: 1 }, closed: false }]);
    expect(operator.watermarkMs()).toBe(100);
    // One open entry per side holding b's window: its left and its right.
    expect(operator.openEntries()).toBe(2);
  });

  it("matches the naive reference over random interleavings, with a snapshot and restore anywhere", () => {
    const record = fc.tuple(fc.constantFrom("a", "b", "c"), fc.integer({ min: 0, max: 599 }), fc.constantFrom(0, 1), fc.integer({ min: 0, max: 9 }));
    const step = fc.oneof(
      fc.array(record, { minLength: 1, maxLength: 6 }).map((rs) => ({ records: rs.map(([k, t, side, v]): FluxRecord => [k, t, side, v]) })),
      fc.integer({ min: 0, max: 700 }).map((tickMs) => ({ tickMs })),
    );
    fc.assert(
      fc.property(fc.constantFrom("inner" as const, "left" as const), fc.array(step, { maxLength: 20 }), fc.nat(20), (kind, steps, snapshotAt) => {
        const { out } = run(joinSpec(kind), steps, snapshotAt);
        expect(out).toEqual(reference(kind, steps));
      }),
      { numRuns: 500 },
    );
  });

  it("routes each upstream's results by its own side, and refuses to route a dataflow it does not read", () => {
    const spec = joinSpec("inner");
    const result = (values: Record<string, number>): WindowResult => ({ key: "u1", windowStartMs: 0, windowEndMs: 100, values, closed: true });
    expect(routeOutputs(spec, defaultKeyGroupMap(spec.partitions), [{ outputSeq: 1, result: result({ n: 4 }) }], 256, { id: "clicks", key: "user" })[0]?.record).toEqual(["u1", 99, 0, 4]);
    expect(routeOutputs(spec, defaultKeyGroupMap(spec.partitions), [{ outputSeq: 1, result: result({ tier: 2 }) }], 256, { id: "profiles", key: "user" })[0]?.record).toEqual(["u1", 99, 1, 2]);
    expect(() => routeOutputs(spec, defaultKeyGroupMap(spec.partitions), [], 256, { id: "other", key: "user" })).toThrow(/reads no dataflow 'other'/);
  });

  it("is refused without two dataflows, with aggregates, without a window, or naming a value twice", () => {
    const base = { key: "key", window: { kind: "tumbling", sizeMs: 100 }, join: { left: { n: { op: "count" } }, right: { n: { op: "count" } } } };
    const issues = (spec: unknown) => {
      const parsed = DataflowSpecSchema.safeParse(spec);
      return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    };
    expect(issues({ ...base, from: ["a", "b"] })).toEqual(["join.right.n: 'n' is also an aggregate of join.left: each value of a joined result needs its own name"]);
    const ok = { ...base, from: ["a", "b"], join: { left: { n: { op: "count" } }, right: { m: { op: "count" } } } };
    expect(issues(ok)).toEqual([]);
    expect(issues({ ...ok, from: "a" })).toEqual(["from: a join reads exactly two different dataflows: from: [left, right]"]);
    expect(issues({ ...ok, aggregates: { x: { op: "count" } } })).toEqual(["aggregates: a join has its aggregates in join.left and join.right, not aggregates"]);
    const { window: _window, ...noWindow } = ok;
    expect(issues(noWindow)).toEqual(["window: a join needs a window: results of both sides join per key and window"]);
  });
});
