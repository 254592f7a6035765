/** The tumbling-window operator against a naive reference: aggregates, closing, lateness, snapshot/restore. */
import { describe, expect, it } from "vitest";
import { rng } from "../helpers/rng.ts";
import { windowAggregate } from "../../shared/operators/window-aggregate.ts";
import type { Accumulator, WindowAggregateState } from "../../shared/operators/window-aggregate-state.ts";
import type { DataflowSpec } from "../../shared/wire/dataflow-spec.ts";
import type { FluxRecord, WindowResult } from "../../shared/wire/window-result.ts";

type Spec = Required<Pick<DataflowSpec, "window" | "aggregates">>;

/** count, and sum/min/max/avg of `v`, plus a sum of `w` to show each aggregate reads its own field. */
function makeSpec(sizeMs: number, allowedLatenessMs = 0): Spec {
  return {
    window: { kind: "tumbling", sizeMs, allowedLatenessMs },
    aggregates: {
      n: { op: "count" },
      total: { op: "sum", field: "v" },
      lo: { op: "min", field: "v" },
      hi: { op: "max", field: "v" },
      mean: { op: "avg", field: "v" },
      wsum: { op: "sum", field: "w" },
    },
  };
}

/** Feeds batches to a fresh operator (or to `state`), collecting every emitted result. */
function run(spec: Spec, batches: readonly (readonly FluxRecord[])[], state?: WindowAggregateState) {
  const op = windowAggregate(spec);
  let s = state ?? op.init();
  const outputs: WindowResult[] = [];
  for (const batch of batches) s = op.process(s, batch, (r) => outputs.push(r));
  return { op, state: s, outputs, value: op.snapshot(s) as { open: Record<string, Record<string, Accumulator>> } };
}

const mulberry32 = (seed: number): (() => number) => rng(seed).next;

/** Record-at-a-time reference: raw value lists per (start, key), closing after every record. */
function reference(spec: Spec, records: readonly FluxRecord[]) {
  const { sizeMs, allowedLatenessMs } = spec.window;
  const open = new Map<number, Map<string, [number, number][]>>();
  const outputs: WindowResult[] = [];
  let maxTime = Number.NEGATIVE_INFINITY;
  let late = 0;
  const result = (key: string, start: number, rows: [number, number][], closed: boolean): WindowResult => {
    const vs = rows.map((r) => r[0]);
    const total = vs.reduce((a, b) => a + b, 0);
    const values = {
      n: rows.length,
      total,
      lo: Math.min(...vs),
      hi: Math.max(...vs),
      mean: total / rows.length,
      wsum: rows.map((r) => r[1]).reduce((a, b) => a + b, 0),
    };
    return { key, windowStartMs: start, windowEndMs: start + sizeMs, values, closed };
  };
  const sorted = (closed: boolean, pick: (start: number) => boolean) => {
    const out: WindowResult[] = [];
    for (const start of [...open.keys()].sort((a, b) => a - b).filter(pick)) {
      const byKey = open.get(start) ?? new Map<string, [number, number][]>();
      for (const key of [...byKey.keys()].sort()) out.push(result(key, start, byKey.get(key) ?? [], closed));
      if (closed) open.delete(start);
    }
    return out;
  };
  for (const [key, t, rawV = 0, rawW = 0] of records) {
    const [v, w] = [Number(rawV), Number(rawW)];
    const start = Math.floor(t / sizeMs) * sizeMs;
    if (start + sizeMs <= maxTime - allowedLatenessMs) {
      late += 1;
      continue;
    }
    const byKey = open.get(start) ?? new Map<string, [number, number][]>();
    open.set(start, byKey);
    byKey.set(key, [...(byKey.get(key) ?? []), [v, w]]);
    maxTime = Math.max(maxTime, t);
    outputs.push(...sorted(true, (s) => s + sizeMs <= maxTime - allowedLatenessMs));
  }
  return { outputs, late, open: sorted(false, () => true) };
}

/** A random stream: mostly advancing time with jitter, a few far-late records, few keys. */
function randomRecords(rng: () => number, count: number): FluxRecord[] {
  const keys = ["a", "b", "c", "k1", "Z", "user:7"];
  let base = Math.floor(rng() * 2000) - 1000;
  const records: FluxRecord[] = [];
  for (let i = 0; i < count; i++) {
    base += Math.floor(rng() * 8);
    const jitter = rng() < 0.1 ? -Math.floor(rng() * 200) : Math.floor(rng() * 40) - 20;
    const key = keys[Math.floor(rng() * keys.length)] ?? "a";
    records.push([key, base + jitter, Math.floor(rng() * 101) - 50, Math.floor(rng() * 10)]);
  }
  return records;
}

/** Splits records into consecutive batches at random boundaries (some empty). */
function randomSplit(rng: () => number, records: readonly FluxRecord[]): FluxRecord[][] {
  const batches: FluxRecord[][] = [];
  let i = 0;
  while (i < records.length) {
    const n = Math.floor(rng() * 12);
    batches.push(records.slice(i, i + n));
    i += n;
  }
  return batches;
}

describe("windowAggregate aggregates", () => {
  it("computes count, sum, min, max and avg per key per window, each from its own field", () => {
    const { outputs } = run(makeSpec(10), [
      [["a", 1, 4, 100], ["b", 2, 7, 1], ["a", 3, -2, 200], ["a", 9, 10, 300], ["a", 12, 5, 0]],
      [["z", 20, 0, 0]],
    ]);
    expect(outputs).toEqual([
      { key: "a", windowStartMs: 0, windowEndMs: 10, values: { n: 3, total: 12, lo: -2, hi: 10, mean: 4, wsum: 600 }, closed: true },
      { key: "b", windowStartMs: 0, windowEndMs: 10, values: { n: 1, total: 7, lo: 7, hi: 7, mean: 7, wsum: 1 }, closed: true },
      { key: "a", windowStartMs: 10, windowEndMs: 20, values: { n: 1, total: 5, lo: 5, hi: 5, mean: 5, wsum: 0 }, closed: true },
    ]);
  });

  it("assigns negative event times to windows by floor division", () => {
    const { op, state } = run(makeSpec(10, 100), [[["a", -11, 3, 0], ["a", -10, 2, 0], ["a", -1, 1, 0]]]);
    expect(op.openResults(state, {}).map((r) => [r.windowStartMs, r.values.n])).toEqual([
      [-20, 1],
      [-10, 2],
    ]);
  });
});

describe("windowAggregate closing", () => {
  it("keeps a window open until the max event time reaches its end, then emits it closed", () => {
    const spec = makeSpec(10);
    const { op, state, outputs } = run(spec, [[["a", 0, 1, 0], ["a", 9, 1, 0]]]);
    expect(outputs).toEqual([]);
    const more: WindowResult[] = [];
    op.process(state, [["b", 10, 1, 0]], (r) => more.push(r));
    expect(more.map((r) => [r.key, r.windowStartMs, r.values.n, r.closed])).toEqual([["a", 0, 2, true]]);
  });

  it("waits for allowed lateness beyond the window end before closing", () => {
    const spec = makeSpec(10, 5);
    const op = windowAggregate(spec);
    const state = op.init();
    const out: WindowResult[] = [];
    op.process(state, [["a", 3, 1, 0], ["a", 14, 1, 0]], (r) => out.push(r));
    expect(out).toEqual([]);
    op.process(state, [["a", 15, 1, 0]], (r) => out.push(r));
    expect(out.map((r) => [r.key, r.windowStartMs])).toEqual([["a", 0]]);
  });

  it("emits each window exactly once however far the watermark advances later", () => {
    const { outputs } = run(makeSpec(10), [[["a", 1, 1, 0]], [["a", 50, 1, 0]], [["a", 60, 1, 0]], [["a", 500, 1, 0]], [["a", 501, 1, 0]]]);
    expect(outputs.map((r) => r.windowStartMs)).toEqual([0, 50, 60]);
  });

  it("emits several windows closed by one batch in (start, key) order", () => {
    const { outputs } = run(makeSpec(10, 20), [
      [["b", 15, 1, 0], ["c", 1, 1, 0], ["a", 12, 1, 0], ["a", 2, 1, 0], ["B", 3, 1, 0]],
      [["x", 100, 1, 0]],
    ]);
    expect(outputs.map((r) => `${r.windowStartMs}/${r.key}`)).toEqual(["0/B", "0/a", "0/c", "10/a", "10/b"]);
  });

  it("does not advance the watermark or emit when a batch holds only late records", () => {
    const spec = makeSpec(10);
    const { op, state } = run(spec, [[["a", 1, 1, 0], ["a", 35, 1, 0]]]);
    const before = JSON.stringify({ ...(op.snapshot(state) as object), lateRecords: 0 });
    const out: WindowResult[] = [];
    op.process(state, [["a", 5, 1, 0], ["b", 29, 1, 0]], (r) => out.push(r));
    expect(out).toEqual([]);
    expect(state.lateRecords).toBe(2);
    expect(JSON.stringify({ ...(op.snapshot(state) as object), lateRecords: 0 })).toBe(before);
  });
});

describe("windowAggregate late records", () => {
  it("drops and counts records whose window the watermark already passed, keeping those within lateness", () => {
    const spec = makeSpec(10, 5);
    const { op, state, outputs } = run(spec, [[["a", 3, 1, 0]], [["a", 22, 1, 0]], [["a", 4, 100, 0], ["a", 12, 7, 0]]]);
    expect(state.lateRecords).toBe(1);
    expect(outputs.map((r) => [r.windowStartMs, r.values.total])).toEqual([[0, 1]]);
    expect(op.openResults(state, {}).map((r) => [r.windowStartMs, r.values.total])).toEqual([
      [10, 7],
      [20, 1],
    ]);
  });

  it("judges lateness record by record inside a batch", () => {
    const { state, outputs } = run(makeSpec(10), [[["a", 25, 1, 0], ["a", 3, 1, 0], ["a", 9, 1, 0], ["a", 21, 1, 0]]]);
    expect(state.lateRecords).toBe(2);
    expect(outputs).toEqual([]);
  });
});

describe("windowAggregate openResults", () => {
  const spec = makeSpec(10, 100);
  const { op, state } = run(spec, [
    [["b", 1, 1, 0], ["a", 2, 2, 0], ["a", 11, 3, 0], ["c", 25, 4, 0], ["a", 27, 5, 0]],
  ]);
  const ids = (rs: WindowResult[]) => rs.map((r) => `${r.windowStartMs}/${r.key}`);

  it("lists every open window as not closed, in (start, key) order", () => {
    const all = op.openResults(state, {});
    expect(ids(all)).toEqual(["0/a", "0/b", "10/a", "20/a", "20/c"]);
    expect(all.every((r) => !r.closed)).toBe(true);
    expect(all[0]?.values).toEqual({ n: 1, total: 2, lo: 2, hi: 2, mean: 2, wsum: 0 });
  });

  it("filters by key and returns nothing for an unseen key", () => {
    expect(ids(op.openResults(state, { key: "a" }))).toEqual(["0/a", "10/a", "20/a"]);
    expect(op.openResults(state, { key: "nope" })).toEqual([]);
  });

  it("keeps windows overlapping [fromMs, toMs) and drops those only touching its edges", () => {
    expect(ids(op.openResults(state, { fromMs: 10 }))).toEqual(["10/a", "20/a", "20/c"]);
    expect(ids(op.openResults(state, { fromMs: 9 }))).toEqual(["0/a", "0/b", "10/a", "20/a", "20/c"]);
    expect(ids(op.openResults(state, { toMs: 20 }))).toEqual(["0/a", "0/b", "10/a"]);
    expect(ids(op.openResults(state, { toMs: 21 }))).toEqual(["0/a", "0/b", "10/a", "20/a", "20/c"]);
    expect(ids(op.openResults(state, { key: "a", fromMs: 15, toMs: 25 }))).toEqual(["10/a", "20/a"]);
  });

  it("counts the (window, key) entries it holds open, which a close takes away", () => {
    expect(op.openEntries(state)).toBe(op.openResults(state, {}).length);
    expect(op.openEntries(state)).toBe(5);
    const later = run(makeSpec(10), [[["a", 1, 1, 0], ["b", 2, 1, 0], ["a", 15, 1, 0]]]);
    expect(later.op.openEntries(later.state)).toBe(1);
    expect(later.op.openEntries(later.op.init())).toBe(0);
  });

  it("does not list windows after they closed", () => {
    const later = run(makeSpec(10), [[["a", 1, 1, 0], ["a", 15, 1, 0]]]);
    expect(ids(later.op.openResults(later.state, {}))).toEqual(["10/a"]);
  });

  it("returns nothing for a key named like an Object.prototype member that was never seen", () => {
    expect(op.openResults(state, { key: "constructor" })).toEqual([]);
    expect(op.openResults(state, { key: "toString" })).toEqual([]);
  });
});

describe("windowAggregate keys", () => {
  it("aggregates keys named like Object.prototype members like any other key", () => {
    const spec = makeSpec(10);
    const records: FluxRecord[] = [["constructor", 1, 2, 0], ["toString", 2, 3, 0], ["hasOwnProperty", 3, 4, 0], ["x", 20, 0, 0]];
    const outputs: WindowResult[] = [];
    const op = windowAggregate(spec);
    expect(() => op.process(op.init(), records, (r) => outputs.push(r))).not.toThrow();
    expect(outputs.map((r) => [r.key, r.values.total])).toEqual([
      ["constructor", 2],
      ["hasOwnProperty", 4],
      ["toString", 3],
    ]);
  });
});

describe("windowAggregate determinism", () => {
  it("gives identical outputs and state whatever the batch boundaries", () => {
    for (let seed = 1; seed <= 20; seed++) {
      const rng = mulberry32(seed);
      const spec = makeSpec(1 + Math.floor(rng() * 50), Math.floor(rng() * 30));
      const records = randomRecords(rng, 300);
      const whole = run(spec, [records]);
      const single = run(spec, records.map((r) => [r]));
      const split = run(spec, randomSplit(rng, records));
      expect(single.outputs, `seed ${seed}`).toEqual(whole.outputs);
      expect(split.outputs, `seed ${seed}`).toEqual(whole.outputs);
      expect(single.value, `seed ${seed}`).toEqual(whole.value);
      expect(split.value, `seed ${seed}`).toEqual(whole.value);
    }
  });

  it("continues from a JSON snapshot restored into a fresh instance exactly as an uninterrupted run", () => {
    for (let seed = 100; seed < 120; seed++) {
      const rng = mulberry32(seed);
      const spec = makeSpec(1 + Math.floor(rng() * 50), Math.floor(rng() * 30));
      const batches = randomSplit(rng, randomRecords(rng, 300));
      const cut = Math.floor(rng() * (batches.length + 1));
      const golden = run(spec, batches);
      const first = run(spec, batches.slice(0, cut));
      const snapshot = JSON.stringify(first.value);
      const restored = first.op.restore(JSON.parse(snapshot));
      const second = run(spec, batches.slice(cut), restored);
      expect([...first.outputs, ...second.outputs], `seed ${seed} cut ${cut}`).toEqual(golden.outputs);
      expect(second.value, `seed ${seed} cut ${cut}`).toEqual(golden.value);
      expect(second.op.openResults(second.state, {}), `seed ${seed}`).toEqual(golden.op.openResults(golden.state, {}));
    }
  });

  it("matches a naive record-at-a-time reference on random input", () => {
    for (let seed = 1000; seed < 1050; seed++) {
      const rng = mulberry32(seed);
      const spec = makeSpec(1 + Math.floor(rng() * 50), rng() < 0.3 ? 0 : Math.floor(rng() * 60));
      const records = randomRecords(rng, 400);
      const actual = run(spec, randomSplit(rng, records));
      const expected = reference(spec, records);
      expect(actual.outputs, `seed ${seed}`).toEqual(expected.outputs);
      expect(actual.state.lateRecords, `seed ${seed}`).toBe(expected.late);
      expect(actual.op.openResults(actual.state, {}), `seed ${seed}`).toEqual(expected.open);
    }
  });

  it("keeps no minima or maxima when no aggregate reads them, with the same count, sum and avg", () => {
    for (let seed = 2000; seed < 2010; seed++) {
      const rng = mulberry32(seed);
      const full = makeSpec(1 + Math.floor(rng() * 50), Math.floor(rng() * 30));
      const { lo: _lo, hi: _hi, ...rest } = full.aggregates;
      const lean: Spec = { ...full, aggregates: rest };
      const batches = randomSplit(rng, randomRecords(rng, 300));
      const withExtremes = run(full, batches);
      const without = run(lean, batches);
      const drop = (r: WindowResult) => ({ ...r, values: { ...r.values, lo: undefined, hi: undefined } });
      expect(without.outputs.map(drop), `seed ${seed}`).toEqual(withExtremes.outputs.map(drop));
      const accs = Object.values(without.value.open).flatMap((byKey) => Object.values(byKey));
      expect(accs.length, `seed ${seed}`).toBeGreaterThan(0);
      for (const acc of accs) expect([acc.min, acc.max]).toEqual([[], []]);
    }
  });

  it("exercises late records and closed windows in the random runs", () => {
    const rng = mulberry32(1000);
    const spec = makeSpec(1 + Math.floor(rng() * 50), rng() < 0.3 ? 0 : Math.floor(rng() * 60));
    const expected = reference(spec, randomRecords(rng, 400));
    expect(expected.late).toBeGreaterThan(0);
    expect(expected.outputs.length).toBeGreaterThan(10);
  });
});
