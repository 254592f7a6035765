/** `distinct` (HyperLogLog) and `topk` (Space-Saving) window aggregates against a naive reference: bounds, checkpoints, batching, ticks, restore checks, record layout. */
import { describe, expect, it } from "vitest";
import { compileDataflow } from "../../shared/operators/compile.ts";
import { windowAggregate } from "../../shared/operators/window-aggregate.ts";
import type { WindowAggregateState } from "../../shared/operators/window-aggregate-state.ts";
import { DataflowSpecSchema } from "../../shared/dataflow-checks/dataflow-spec-schema.ts";
import type { DataflowSpec } from "../../shared/wire/dataflow-spec.ts";
import type { FluxRecord, WindowResult } from "../../shared/wire/window-result.ts";
import { rng } from "../helpers/rng.ts";

type Top = Array<{ value: string; count: number; error: number }>;
/** A batch of records `[key, timeMs, bytes, dst]`, or a clock tick. */
type Step = FluxRecord[] | { tickMs: number };
type Row = { dst: string; bytes: number };

/** The topk aggregates of {@link makeSpec}: `top` and `wtop` have the default capacity max(8k, 64) = 64. */
const TOPS = {
  top: { k: 5, cap: 64, weighted: false },
  wtop: { k: 5, cap: 64, weighted: true },
  tiny: { k: 4, cap: 4, weighted: false },
  wtiny: { k: 3, cap: 12, weighted: true },
};

/** Records are `[key, timeMs, bytes, dst]`: `bytes` is the one numeric field, `dst` the one string field. */
function makeSpec(window: Record<string, unknown>, precision = 12): DataflowSpec {
  const aggregates = {
    n: { op: "count" },
    d: { op: "distinct", field: "dst", precision },
    ...{ top: { op: "topk", field: "dst", k: 5 }, wtop: { op: "topk", field: "dst", k: 5, weight: "bytes" } },
    ...{ tiny: { op: "topk", field: "dst", k: 4, capacity: 4 }, wtiny: { op: "topk", field: "dst", k: 3, weight: "bytes", capacity: 12 } },
  };
  return DataflowSpecSchema.parse({ stream: "flows", key: "src", timeField: "ts", window, aggregates });
}

const CONFIGS = [
  { window: { kind: "tumbling", sizeMs: 2000, allowedLatenessMs: 300 }, precision: 12 },
  { window: { kind: "sliding", sizeMs: 1000, slideMs: 250, allowedLatenessMs: 200 }, precision: 10 },
  { window: { kind: "tumbling", sizeMs: 400, allowedLatenessMs: 50 }, precision: 8 },
];

function run(spec: DataflowSpec, steps: readonly Step[], state?: WindowAggregateState) {
  const op = windowAggregate(spec);
  let s = state ?? op.init();
  const outputs: WindowResult[] = [];
  for (const step of steps) s = Array.isArray(step) ? op.process(s, step, (r) => outputs.push(r)) : op.tick(s, step.tickMs, (r) => outputs.push(r));
  return { op, state: s, outputs, open: op.openResults(s, {}), late: op.lateRecords(s) };
}

/** Record at a time, raw rows per (window start, key); a window closes once max time − lateness reaches its end. */
function reference(spec: DataflowSpec, steps: readonly Step[]) {
  const win = spec.window;
  if (!win) throw new Error("reference needs a window");
  const { sizeMs, allowedLatenessMs } = win;
  const slideMs = win.kind === "sliding" ? win.slideMs : sizeMs;
  const open = new Map<number, Map<string, Row[]>>();
  const closed: { key: string; start: number; rows: Row[] }[] = [];
  let max = Number.NEGATIVE_INFINITY;
  let late = 0;
  const advance = (t: number) => {
    if (t <= max) return;
    max = t;
    for (const start of [...open.keys()].sort((a, b) => a - b)) {
      if (start + sizeMs > max - allowedLatenessMs) continue;
      const byKey = open.get(start) ?? new Map<string, Row[]>();
      for (const key of [...byKey.keys()].sort()) closed.push({ key, start, rows: byKey.get(key) ?? [] });
      open.delete(start);
    }
  };
  for (const step of steps) {
    if (!Array.isArray(step)) advance(step.tickMs);
    for (const [key, t, bytes, dst] of Array.isArray(step) ? step : []) {
      let counted = false;
      for (let start = Math.floor(t / slideMs) * slideMs; start + sizeMs > t; start -= slideMs) {
        if (start + sizeMs <= max - allowedLatenessMs) continue;
        const byKey = open.get(start) ?? new Map<string, Row[]>();
        open.set(start, byKey);
        byKey.set(key, [...(byKey.get(key) ?? []), { dst: String(dst), bytes: Number(bytes) }]);
        counted = true;
      }
      if (counted) advance(t);
      else late += 1;
    }
  }
  return { closed, late };
}

/** Mostly advancing time with jitter and ~3 % far-late records; `big` sees thousands of dst values, the others few; hot values are heavy. */
function randomRecords(r: ReturnType<typeof rng>, count: number): FluxRecord[] {
  let base = r.int(1000) - 500;
  const records: FluxRecord[] = [];
  for (let i = 0; i < count; i++) {
    base += r.int(3);
    const t = base + (r.chance(0.03) ? -r.int(3000) : r.int(41) - 20);
    const key = r.chance(0.5) ? "big" : (["small", "mid", "constructor"][r.int(3)] ?? "small");
    const pool = key === "big" ? 4000 : key === "mid" ? 50 : 8;
    const hot = r.chance(0.35);
    const dst = r.chance(0.02) ? "__proto__" : hot ? `hot${Math.floor(8 * r.next() ** 2)}` : `d${r.int(pool)}`;
    records.push([key, t, hot ? 500 + r.int(1500) : 1 + r.int(500), dst]);
  }
  return records;
}

/** Consecutive batches of 0–59 records. */
function randomSplit(r: ReturnType<typeof rng>, records: readonly FluxRecord[]): FluxRecord[][] {
  const batches: FluxRecord[][] = [];
  for (let i = 0, n = r.int(60); i < records.length; i += n, n = r.int(60)) batches.push(records.slice(i, i + n));
  return batches;
}

const byCountThenValue = (a: { value: string; count: number }, b: { value: string; count: number }) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0);

/** Exact top-k when at most `cap` values were seen; otherwise the Space-Saving bounds. Returns which path was checked. */
function checkTop(list: Top, rows: readonly Row[], spec: { k: number; cap: number; weighted: boolean }, label: string): "exact" | "bounded" {
  const truth = new Map<string, number>();
  for (const { dst, bytes } of rows) truth.set(dst, (truth.get(dst) ?? 0) + (spec.weighted ? bytes : 1));
  if (truth.size <= spec.cap) {
    const exact = [...truth].map(([value, count]) => ({ value, count, error: 0 })).sort(byCountThenValue);
    expect(list, label).toEqual(exact.slice(0, spec.k));
    return "exact";
  }
  const bound = [...truth.values()].reduce((a, b) => a + b, 0) / spec.cap;
  expect(list.length, label).toBe(spec.k);
  expect([...list].sort(byCountThenValue), `${label} order`).toEqual(list);
  for (const { value, count, error } of list) {
    const w = truth.get(value) ?? 0;
    expect(count - error <= w && w <= count && error >= 0 && error <= bound, `${label} ${value}: count ${count} error ${error} true ${w} W/c ${bound}`).toBe(true);
  }
  // Any value missing from the list weighs at most the k-th count (monitored: count ≤ k-th; evicted: true ≤ the minimum).
  const listed = new Set(list.map((e) => e.value));
  const kth = list[list.length - 1]?.count ?? 0;
  for (const [value, w] of truth) {
    if (!listed.has(value)) expect(w, `${label} unlisted ${value} vs k-th count`).toBeLessThanOrEqual(kth);
    // With k = capacity the list is the whole summary, which monitors every value heavier than W/c.
    if (spec.k === spec.cap && w > bound) expect(listed.has(value), `${label} ${value} weighs ${w} > W/c ${bound}`).toBe(true);
  }
  return "bounded";
}

describe("distinct and topk against a naive reference", () => {
  // CPU-heavy: 5.8 s run alone and 7 s within npm test on the shared 2-core machine, over Vitest's 5 s default.
  it("match on random input: exact counts, exact small distinct sets and top-k lists, HLL and Space-Saving bounds otherwise", { timeout: 60_000 }, () => {
    const paths = new Map<string, number>();
    const seen = (path: string) => paths.set(path, (paths.get(path) ?? 0) + 1);
    for (const [c, { window, precision }] of CONFIGS.entries()) {
      const spec = makeSpec(window, precision);
      for (let seed = 1; seed <= 4; seed++) {
        const r = rng(seed * 10 + c);
        const records = randomRecords(r, 8000);
        const actual = run(spec, randomSplit(r, records));
        const expected = reference(spec, [records]);
        const label = `config ${c} seed ${seed}`;
        expect(actual.late, label).toBe(expected.late);
        expect(actual.outputs.map((o) => [o.windowStartMs, o.key]), label).toEqual(expected.closed.map((w) => [w.start, w.key]));
        if (expected.late > 0) seen("late");
        actual.outputs.forEach((result, i) => {
          const { rows } = expected.closed[i] ?? { rows: [] };
          const at = `${label} window ${result.windowStartMs}/${result.key}`;
          expect(result.closed && result.windowEndMs - result.windowStartMs === window.sizeMs, at).toBe(true);
          expect(result.values.n, at).toBe(rows.length);
          // Sparse mode (up to m/16 values) is exact; dense estimates stay within 3 standard errors of 1.04/√m.
          const exact = new Set(rows.map((row) => row.dst)).size;
          const dense = exact > 2 ** precision / 16;
          const d = result.values.d;
          expect(typeof d === "number" && Math.abs(d - exact) <= (dense ? (3 * 1.04 * exact) / Math.sqrt(2 ** precision) : 0), `${at} distinct ${String(d)} vs ${exact}`).toBe(true);
          seen(dense ? "distinct estimated" : "distinct exact");
          for (const [name, top] of Object.entries(TOPS)) seen(`${name} ${checkTop(result.values[name] as Top, rows, top, `${at} ${name}`)}`);
        });
      }
    }
    // Every path above was taken, so none of its checks is vacuous.
    const names = ["late", "distinct exact", "distinct estimated", ...Object.keys(TOPS).flatMap((n) => [`${n} exact`, `${n} bounded`])];
    for (const name of names) expect(paths.get(name) ?? 0, name).toBeGreaterThan(0);
  });
});

describe("distinct and topk state", () => {
  it("continues from a JSON snapshot restored into a fresh operator exactly as an uninterrupted run", () => {
    for (const [c, { window, precision }] of CONFIGS.entries()) {
      for (let seed = 1; seed <= 3; seed++) {
        const r = rng(100 + seed * 10 + c);
        const spec = makeSpec(window, precision);
        const batches = randomSplit(r, randomRecords(r, 8000));
        const cut = Math.floor(batches.length / 2);
        const golden = run(spec, batches);
        const first = run(spec, batches.slice(0, cut));
        const restored = windowAggregate(spec).restore(JSON.parse(JSON.stringify(first.op.snapshot(first.state))));
        const second = run(spec, batches.slice(cut), restored);
        const label = `config ${c} seed ${seed}`;
        expect(first.outputs.length > 0 && second.outputs.length > 0, label).toBe(true);
        expect([...first.outputs, ...second.outputs], label).toEqual(golden.outputs);
        expect(second.open, label).toEqual(golden.open);
        expect(second.late, label).toBe(golden.late);
      }
    }
  });

  it("gives identical outputs and state whatever the batch boundaries", () => {
    for (const [c, { window, precision }] of CONFIGS.entries()) {
      const r = rng(200 + c);
      const spec = makeSpec(window, precision);
      const records = randomRecords(r, 3000);
      const whole = run(spec, [records]);
      for (const batches of [records.map((rec) => [rec]), randomSplit(r, records), randomSplit(r, records)]) {
        const split = run(spec, batches);
        expect(split.outputs, `config ${c}`).toEqual(whole.outputs);
        expect(JSON.stringify(split.state), `config ${c}`).toBe(JSON.stringify(whole.state));
      }
    }
  });
});

describe("distinct and topk ticks", () => {
  it("close windows exactly like a record of that time would, without counting anything", () => {
    const probe = "~probe";
    for (const [c, { window, precision }] of CONFIGS.entries()) {
      const r = rng(300 + c);
      const spec = makeSpec(window, precision);
      const batches = randomSplit(r, randomRecords(r, 3000));
      const ticked: Step[] = [];
      const probed: Step[] = [];
      let maxMs = Number.NEGATIVE_INFINITY;
      for (const batch of batches) {
        for (const [, t] of batch) maxMs = Math.max(maxMs, t);
        ticked.push(batch);
        probed.push(batch);
        if (!r.chance(0.3)) continue;
        const tickMs = maxMs + r.int(900) - 100;
        ticked.push({ tickMs });
        probed.push([[probe, tickMs, 1, "x"]]);
      }
      const withTicks = run(spec, ticked);
      const withProbes = run(spec, probed);
      const label = `config ${c}`;
      expect(withTicks.outputs.length, label).toBeGreaterThan(0);
      expect(withTicks.outputs, label).toEqual(withProbes.outputs.filter((o) => o.key !== probe));
      expect(withTicks.open, label).toEqual(withProbes.open.filter((o) => o.key !== probe));
      const expected = reference(spec, ticked);
      expect(withTicks.outputs.map((o) => [o.windowStartMs, o.key, o.values.n]), label).toEqual(expected.closed.map((w) => [w.start, w.key, w.rows.length]));
      expect(withTicks.late, label).toBe(expected.late);
    }
  });

  it("counts a record older than the ticked watermark as late and ignores ticks back in time", () => {
    const spec = makeSpec({ kind: "tumbling", sizeMs: 10, allowedLatenessMs: 5 });
    const op = windowAggregate(spec);
    const out: WindowResult[] = [];
    let s = op.tick(op.init(), 50, (o) => out.push(o));
    expect(op.openResults(s, {})).toEqual([]);
    s = op.process(s, [["a", 39, 7, "x"], ["a", 45, 9, "y"], ["b", 3, 1, "z"]], (o) => out.push(o));
    expect(op.lateRecords(s)).toBe(2);
    s = op.tick(s, 40, (o) => out.push(o));
    expect(out).toEqual([]);
    s = op.tick(s, 55, (o) => out.push(o));
    const y = (count: number) => [{ value: "y", count, error: 0 }];
    const values = { n: 1, d: 1, top: y(1), wtop: y(9), tiny: y(1), wtiny: y(9) };
    expect(out).toEqual([{ key: "a", windowStartMs: 40, windowEndMs: 50, values, closed: true }]);
  });
});

describe("distinct and topk restore", () => {
  const spec = makeSpec({ kind: "tumbling", sizeMs: 1000, allowedLatenessMs: 0 });
  const op = windowAggregate(spec);
  const valid = op.process(op.init(), [["a", 1, 10, "x"], ["a", 2, 20, "y"]], () => {});
  /** A JSON copy of the valid state whose accumulator for "a" in window 0 is changed by `edit`. */
  const withAccumulator = (edit: (acc: Record<string, unknown>) => void): unknown => {
    const copy = JSON.parse(JSON.stringify(op.snapshot(valid))) as { open: Record<string, Record<string, Record<string, unknown>>> };
    const acc = copy.open["0"]?.["$a"];
    if (!acc) throw new Error("fixture lacks window 0 of key a");
    edit(acc);
    return copy;
  };

  it("accepts a JSON copy of a real state", () => expect(op.snapshot(op.restore(JSON.parse(JSON.stringify(op.snapshot(valid)))))).toEqual(op.snapshot(valid)));

  it.each([
    ["null", null],
    ["no open", { maxTimeMs: 2, lateRecords: 0 }],
    ["no lateRecords", { maxTimeMs: 2, open: {} }],
    ["a window start that is not a number", { maxTimeMs: 2, lateRecords: 0, open: { x: {} } }],
    ["a window start not written as the operator writes one", { maxTimeMs: 2, lateRecords: 0, open: { "1e3": {} } }],
    ["no n", withAccumulator((a) => delete a.n)],
    ["a non-numeric sum", withAccumulator((a) => (a.sum = ["10"]))],
    ["hll not an array", withAccumulator((a) => (a.hll = { p: 12, r: [] }))],
    ["an hll with too few registers", withAccumulator((a) => (a.hll = [{ p: 12, r: "000" }]))],
    ["an hll with slots out of order", withAccumulator((a) => (a.hll = [{ p: 12, r: [64 * 5 + 1, 64 * 3 + 1] }]))],
    ["an hll of precision 3", withAccumulator((a) => (a.hll = [{ p: 3, r: [] }]))],
    ["top not an array", withAccumulator((a) => (a.top = "x"))],
    ["a top whose index misses an item", withAccumulator((a) => (a.top = [{ cap: 64, total: 1, items: [["x", 1, 0]], at: {} }]))],
    ["a top entry with error above count", withAccumulator((a) => (a.top = [{ cap: 64, total: 1, items: [["x", 1, 2]], at: { $x: 0 } }]))],
    ["a top over capacity", withAccumulator((a) => (a.top = [{ cap: 1, total: 2, items: [["x", 1, 0], ["y", 1, 0]], at: { $x: 0, $y: 1 } }]))],
  ])("rejects a state with %s", (_, bad) => {
    expect(() => op.restore(bad)).toThrow(/malformed/);
  });

  // A checkpoint lacking the sketches the spec's distinct/topk aggregates need would otherwise report distinct 0 and empty
  // top lists, or make the next record throw in hllAdd.
  it.each([
    ["no hll", (a: Record<string, unknown>) => delete a.hll],
    ["no top", (a: Record<string, unknown>) => delete a.top],
    ["an empty hll list", (a: Record<string, unknown>) => (a.hll = [])],
    ["too few top summaries", (a: Record<string, unknown>) => (a.top = (a.top as unknown[]).slice(1))],
  ])("rejects an accumulator with %s while the spec needs them", (_, edit) => {
    expect(() => op.restore(withAccumulator(edit))).toThrow(/malformed/);
  });
});

describe("distinct and topk record layout", () => {
  it("puts the numeric weight before the string field, each once, and aggregates records in that layout", () => {
    const aggregates = { vol: { op: "sum", field: "bytes" }, peers: { op: "distinct", field: "dst" }, heavy: { op: "topk", field: "dst", k: 3, weight: "bytes" } };
    const compiled = compileDataflow(DataflowSpecSchema.parse({ stream: "flows", key: "src", window: { kind: "tumbling", sizeMs: 100 }, aggregates }));
    expect(compiled.fields).toEqual([{ name: "bytes", type: "number" }, { name: "dst", type: "string" }]);
    const live = compiled.bind();
    const out: WindowResult[] = [];
    live.process([["a", 1, 100, "x"], ["a", 2, 50, "y"], ["a", 3, 10, "x"], ["a", 4, 5, 42]], (o) => out.push(o));
    live.tick(100, (o) => out.push(o));
    const heavy = [{ value: "x", count: 110, error: 0 }, { value: "y", count: 50, error: 0 }, { value: "42", count: 5, error: 0 }];
    expect(out.map((o) => o.values)).toEqual([{ vol: 165, peers: 3, heavy }]);
  });
});
