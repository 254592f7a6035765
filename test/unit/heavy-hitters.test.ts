/** The heavy-hitters custom operator through the registry: a naive reference, checkpoints, batching, ticks, open results, prototype-named values, spec validation. */
import { describe, expect, it } from "vitest";
import { compileDataflow } from "../../shared/operators/compile.ts";
import { heavyHitters } from "../../shared/operators/custom/heavy-hitters.ts";
import type { LiveOperator } from "../../shared/operators/operator.ts";
import { DataflowSpecSchema } from "../../shared/dataflow-checks/dataflow-spec-schema.ts";
import type { FluxRecord, WindowResult } from "../../shared/wire/window-result.ts";
import { rng } from "../helpers/rng.ts";

interface Params {
  windowMs: number;
  allowedLatenessMs?: number;
  minBytes?: number;
  destinationField?: string;
  minDestinations?: number;
}
/** A batch of records `[src, timeMs, bytes, dst?]`, or a clock tick. */
type Step = FluxRecord[] | { tickMs: number };

const PARAMS: Params = { windowMs: 1000, minBytes: 5000, destinationField: "dst", minDestinations: 20 };
const BASE = { stream: "flows", key: "src", timeField: "ts" };

/** Compiles a full spec, parsed as the API would, through the registry. */
function compile(params: Params) {
  return compileDataflow(DataflowSpecSchema.parse({ ...BASE, operator: { name: "heavy-hitters", params } }));
}

function feed(live: LiveOperator, steps: readonly Step[], out: WindowResult[]): void {
  for (const step of steps) {
    if (Array.isArray(step)) live.process(step, (o) => out.push(o));
    else live.tick(step.tickMs, (o) => out.push(o));
  }
}

function run(params: Params, steps: readonly Step[]) {
  const live = compile(params).bind();
  const alerts: WindowResult[] = [];
  feed(live, steps, alerts);
  return { live, alerts, open: live.openResults({}), late: live.lateRecords() };
}

/**
 * Record at a time: exact per-source totals and destination sets per tumbling window. As documented,
 * `destinations` counts distinct destinations only up to the threshold, so it reports min(exact, minDestinations).
 */
function reference(p: Params, steps: readonly Step[]) {
  const { windowMs, allowedLatenessMs = 0, minBytes, minDestinations } = p;
  const open = new Map<number, Map<string, { bytes: number; packets: number; dst: Set<string> }>>();
  const alerts: WindowResult[] = [];
  let max: number | null = null;
  let late = 0;
  const alertsOf = (start: number, closed: boolean): WindowResult[] => {
    const bySource = open.get(start) ?? new Map<string, { bytes: number; packets: number; dst: Set<string> }>();
    return [...bySource.keys()].sort().flatMap((key) => {
      const t = bySource.get(key) ?? { bytes: 0, packets: 0, dst: new Set<string>() };
      const heavy = minBytes !== undefined && t.bytes >= minBytes;
      const fanOut = minDestinations !== undefined && t.dst.size >= minDestinations;
      if (!heavy && !fanOut) return [];
      const values: WindowResult["values"] = { bytes: t.bytes, packets: t.packets, reason: heavy && fanOut ? "bytes+fan-out" : heavy ? "bytes" : "fan-out" };
      if (minDestinations !== undefined) values.destinations = Math.min(t.dst.size, minDestinations);
      return [{ key, windowStartMs: start, windowEndMs: start + windowMs, values, closed }];
    });
  };
  const advance = (timeMs: number) => {
    if (max !== null && timeMs <= max) return;
    max = timeMs;
    for (const start of [...open.keys()].sort((a, b) => a - b)) {
      if (start + windowMs > max - allowedLatenessMs) continue;
      alerts.push(...alertsOf(start, true));
      open.delete(start);
    }
  };
  for (const step of steps) {
    if (!Array.isArray(step)) {
      advance(step.tickMs);
      continue;
    }
    for (const [src, t, bytes, dst] of step) {
      const start = Math.floor(t / windowMs) * windowMs;
      if (max !== null && start + windowMs <= max - allowedLatenessMs) {
        late += 1;
        continue;
      }
      const bySource = open.get(start) ?? new Map<string, { bytes: number; packets: number; dst: Set<string> }>();
      open.set(start, bySource);
      const tally = bySource.get(src) ?? { bytes: 0, packets: 0, dst: new Set<string>() };
      bySource.set(src, { bytes: tally.bytes + Number(bytes), packets: tally.packets + 1, dst: dst === undefined ? tally.dst : new Set([...tally.dst, String(dst)]) });
      advance(t);
    }
  }
  return { alerts, late, open: [...open.keys()].sort((a, b) => a - b).flatMap((start) => alertsOf(start, false)) };
}

/** Sources: heavy (big flows), scanners (many destinations), both, and benign ones (some prototype-named); near the thresholds. */
const SOURCES = ["heavy1", "heavy2", "scan1", "scan2", "both", "benign", "__proto__", "constructor", "10.0.0.9"];

/** Flows at a random rate (so per-window totals straddle the thresholds), with jitter, ticks, and ~4 % far-late records. */
function randomSteps(r: ReturnType<typeof rng>, count: number, withDestination: boolean): Step[] {
  const stepMs = 2 + r.int(4);
  let base = r.int(2000) - 1000;
  const steps: Step[] = [];
  for (let i = 0; i < count; ) {
    if (r.chance(0.05)) steps.push({ tickMs: base + r.int(1500) - 200 });
    const batch: FluxRecord[] = [];
    for (const n = r.int(30); batch.length < n && i < count; i++) {
      base += r.int(2 * stepMs);
      const t = base + (r.chance(0.04) ? -r.int(3000) : r.int(81) - 40);
      const src = SOURCES[r.int(SOURCES.length)] ?? "benign";
      const heavy = src.startsWith("heavy") || src === "both";
      const scan = src.startsWith("scan") || src === "both";
      const bytes = heavy ? 40 + r.int(200) : 1 + r.int(60);
      const dst = scan ? `10.1.0.${r.int(40)}` : (["10.2.0.1", "10.2.0.2", "__proto__", "constructor"][r.int(4)] ?? "x");
      batch.push(withDestination ? [src, t, bytes, dst] : [src, t, bytes]);
    }
    steps.push(batch);
  }
  return steps;
}

const VARIANTS: Params[] = [
  { ...PARAMS, allowedLatenessMs: 0 },
  { ...PARAMS, allowedLatenessMs: 400 },
  { ...PARAMS, allowedLatenessMs: 1500, windowMs: 700 },
  { windowMs: 1000, minBytes: 5000, allowedLatenessMs: 250 },
];

describe("heavy-hitters against a naive reference", () => {
  it("emits exactly the reference's alerts, in (window start, key) order, and counts the same late records", () => {
    const reasons = new Set<unknown>();
    const keys = new Set<string>();
    let late = 0;
    for (const [v, params] of VARIANTS.entries()) {
      for (let seed = 1; seed <= 6; seed++) {
        const steps = randomSteps(rng(seed * 10 + v), 4000, params.destinationField !== undefined);
        const actual = run(params, steps);
        const expected = reference(params, steps);
        const label = `variant ${v} seed ${seed}`;
        expect(actual.alerts, label).toEqual(expected.alerts);
        expect(actual.late, label).toBe(expected.late);
        expect(actual.open, label).toEqual(expected.open);
        expected.alerts.forEach((a) => reasons.add(a.values.reason) && keys.add(a.key));
        late += expected.late;
      }
    }
    // The runs exercise every reason and late records, and benign sources raise no alert.
    expect([...reasons].sort()).toEqual(["bytes", "bytes+fan-out", "fan-out"]);
    expect(["both", "heavy1", "scan1"].every((k) => keys.has(k)) && !keys.has("benign")).toBe(true);
    expect(late).toBeGreaterThan(0);
  });
});

describe("heavy-hitters state", () => {
  it("continues from a JSON snapshot bound to a fresh operator exactly as an uninterrupted run", () => {
    let resumedAlerts = 0;
    for (const [v, params] of VARIANTS.entries()) {
      for (let seed = 1; seed <= 4; seed++) {
        const r = rng(100 + seed * 10 + v);
        const steps = randomSteps(r, 3000, params.destinationField !== undefined);
        const cut = r.int(steps.length + 1);
        const golden = run(params, steps);
        const first = run(params, steps.slice(0, cut));
        const snapshot: unknown = JSON.parse(JSON.stringify(first.live.snapshot()));
        const resumed = heavyHitters.compile(params).bind(snapshot);
        const alerts = [...first.alerts];
        feed(resumed, steps.slice(cut), alerts);
        const label = `variant ${v} seed ${seed} cut ${cut}`;
        expect(alerts, label).toEqual(golden.alerts);
        expect(resumed.openResults({}), label).toEqual(golden.open);
        expect(resumed.lateRecords(), label).toBe(golden.late);
        expect(JSON.stringify(resumed.snapshot()), label).toBe(JSON.stringify(golden.live.snapshot()));
        resumedAlerts += alerts.length - first.alerts.length;
      }
    }
    expect(resumedAlerts).toBeGreaterThan(0);
  });

  it("gives identical alerts and state whatever the batch boundaries", () => {
    for (let seed = 1; seed <= 6; seed++) {
      const r = rng(200 + seed);
      const steps = randomSteps(r, 3000, true);
      const whole = run(PARAMS, steps);
      const records = steps.flatMap((s) => (Array.isArray(s) ? s.map((rec): Step => [rec]) : [s]));
      const merged = steps.reduce<Step[]>((acc, s) => {
        const last = acc[acc.length - 1];
        if (Array.isArray(s) && Array.isArray(last)) last.push(...s);
        else acc.push(Array.isArray(s) ? [...s] : s);
        return acc;
      }, []);
      for (const other of [run(PARAMS, records), run(PARAMS, merged)]) {
        expect(other.alerts, `seed ${seed}`).toEqual(whole.alerts);
        expect(JSON.stringify(other.live.snapshot()), `seed ${seed}`).toBe(JSON.stringify(whole.live.snapshot()));
      }
    }
  });

  it("refuses a malformed checkpoint", () => {
    const compiled = compile(PARAMS);
    for (const bad of [null, {}, { maxTimeMs: 1, lateRecords: 0, open: { "0": { $a: { bytes: 1, packets: 1, nDst: 0 } } } }]) {
      expect(() => compiled.bind(bad), JSON.stringify(bad)).toThrow(/malformed/);
    }
  });
});

describe("heavy-hitters ticks and open results", () => {
  const over = (src: string, t: number): FluxRecord => [src, t, 6000, "10.0.0.1"];

  it("counts an entry per open (window, source), alerting or not, and none once a tick closes them", () => {
    const live = compile({ ...PARAMS, allowedLatenessMs: 5000 }).bind();
    live.process([over("a", 100), ["b", 200, 10, "x"], ["b", 300, 10, "y"], over("a", 1100)], () => undefined);
    expect(live.openEntries()).toBe(3);
    live.tick(10_000, () => undefined);
    expect(live.openEntries()).toBe(0);
  });

  it("closes windows on a tick, emitting their alerts, and counts records older than the ticked watermark as late", () => {
    const live = compile({ ...PARAMS, allowedLatenessMs: 100 }).bind();
    const out: WindowResult[] = [];
    live.process([over("a", 100), ["b", 200, 10, "x"]], (o) => out.push(o));
    live.tick(1099, (o) => out.push(o));
    expect(out).toEqual([]);
    live.tick(1100, (o) => out.push(o));
    expect(out).toEqual([{ key: "a", windowStartMs: 0, windowEndMs: 1000, values: { bytes: 6000, packets: 1, destinations: 1, reason: "bytes" }, closed: true }]);
    live.tick(500, (o) => out.push(o));
    live.process([over("c", 999)], (o) => out.push(o));
    expect([out.length, live.lateRecords(), live.openResults({})]).toEqual([1, 1, []]);
  });

  it("lists only sources over a threshold as open (closed: false), filtered by key, range, position and limit", () => {
    const live = compile({ ...PARAMS, allowedLatenessMs: 100_000 }).bind();
    live.process([over("b", 10), over("a", 20), ["quiet", 30, 10, "x"], over("a", 1500), over("c", 2500), over("a", 2600)], () => {});
    const ids = (filter: Parameters<LiveOperator["openResults"]>[0]) => live.openResults(filter).map((o) => `${o.windowStartMs}/${o.key}`);
    expect(live.openResults({}).every((o) => !o.closed && o.values.reason === "bytes")).toBe(true);
    expect(ids({})).toEqual(["0/a", "0/b", "1000/a", "2000/a", "2000/c"]);
    expect(ids({ key: "a" })).toEqual(["0/a", "1000/a", "2000/a"]);
    expect(ids({ key: "quiet" })).toEqual([]);
    expect(ids({ fromMs: 1000 })).toEqual(["1000/a", "2000/a", "2000/c"]);
    expect(ids({ fromMs: 999, toMs: 2000 })).toEqual(["0/a", "0/b", "1000/a"]);
    expect(ids({ after: { windowStartMs: 0, key: "a" }, limit: 2 })).toEqual(["0/b", "1000/a"]);
    expect(ids({ after: { windowStartMs: 1000, key: "a" }, key: "a" })).toEqual(["2000/a"]);
    expect(ids({ limit: 1 })).toEqual(["0/a"]);
  });

  it("treats __proto__ and constructor as ordinary source and destination values", () => {
    const live = compile({ windowMs: 1000, minDestinations: 3, destinationField: "dst" }).bind();
    const out: WindowResult[] = [];
    const dsts = ["__proto__", "constructor", "__proto__", "toString", "hasOwnProperty"];
    live.process([...dsts.map((d, i): FluxRecord => ["__proto__", i, 1, d]), ["constructor", 5, 1, "__proto__"], ["constructor", 6, 1, "constructor"]], () => {});
    expect(live.openResults({ key: "__proto__" }).map((o) => o.values)).toEqual([{ bytes: 5, packets: 5, destinations: 3, reason: "fan-out" }]);
    live.process([["constructor", 7, 1, "valueOf"], ["x", 1000, 1, "y"]], (o) => out.push(o));
    expect(out.map((o) => [o.key, o.values.packets, o.values.destinations])).toEqual([
      ["__proto__", 5, 3],
      ["constructor", 3, 3],
    ]);
    expect(Object.getPrototypeOf({})).toBe(Object.prototype);
    expect(Object.keys(Object.prototype)).toEqual([]);
  });
});

describe("heavy-hitters spec validation", () => {
  const issues = (spec: Record<string, unknown>) => {
    const parsed = DataflowSpecSchema.safeParse({ ...BASE, ...spec });
    return parsed.success ? [] : parsed.error.issues.map((i) => ({ path: i.path, message: i.message }));
  };
  const op = (params: Record<string, unknown>, name = "heavy-hitters") => ({ operator: { name, params } });

  it("accepts a full spec, and one whose project holds every field the operator reads", () => {
    expect(issues(op({ ...PARAMS }))).toEqual([]);
    expect(issues({ ...op({ ...PARAMS }), project: { src: "a.src", ts: "a.ts", bytes: "a.len", dst: "a.dst" } })).toEqual([]);
  });

  it.each([
    ["an unknown operator", op({ ...PARAMS }, "nope"), ["operator", "name"], /nope/],
    ["a param of the wrong type", op({ ...PARAMS, windowMs: "1000" }), ["operator", "params", "windowMs"], /number/],
    ["an unknown param", op({ ...PARAMS, minByte: 1 }), ["operator", "params"], /minByte/],
    ["no threshold", op({ windowMs: 1000 }), ["operator", "params", "minBytes"], /minBytes, minDestinations/],
    ["minDestinations without destinationField", op({ minDestinations: 5 }), ["operator", "params", "destinationField"], /destinationField/],
    ["a window besides the operator", { ...op({ ...PARAMS }), window: { kind: "tumbling", sizeMs: 1000 } }, ["window"], /operator/],
    ["a project without the destination field", { ...op({ ...PARAMS }), project: { src: "a", ts: "b", bytes: "c" } }, ["operator", "params"], /'dst'/],
    ["a project without the bytes field", { ...op({ ...PARAMS, bytesField: "octets" }), project: { src: "a", ts: "b", dst: "d" } }, ["operator", "params"], /'octets'/],
  ])("rejects %s with an issue at its path", (_, spec, path, message) => {
    const found = issues(spec);
    expect(found.map((i) => i.path)).toEqual([path]);
    expect(found[0]?.message).toMatch(message);
  });
});
