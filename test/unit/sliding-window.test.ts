/** Sliding event-time windows: each record counted in every window holding it, equal to a naive reference, batch boundaries irrelevant. */
import { describe, expect, it } from "vitest";
import { windowAggregate } from "../../shared/operators/window-aggregate.ts";
import type { FluxRecord, WindowResult } from "../../shared/wire/window-result.ts";
import { spec } from "../helpers/fixtures.ts";
import { rng } from "../helpers/rng.ts";

const SIZE = 1_000;
const SLIDE = 250;
const sliding = (latenessMs: number) => spec({ window: { kind: "sliding", sizeMs: SIZE, slideMs: SLIDE, allowedLatenessMs: latenessMs }, aggregates: { n: { op: "count" }, s: { op: "sum", field: "bytes" } } });

function run(latenessMs: number, batches: FluxRecord[][]) {
  const op = windowAggregate(sliding(latenessMs));
  let state = op.init();
  const outputs: WindowResult[] = [];
  for (const batch of batches) state = op.process(state, batch, (o) => outputs.push(o));
  return { outputs, open: op.openResults(state, {}), late: state.lateRecords };
}

/** Record at a time: windows are [k·slide, k·slide + size); closed once end ≤ max time − lateness. */
function reference(latenessMs: number, records: FluxRecord[]) {
  const windows = new Map<string, { n: number; s: number }>();
  const closed = new Set<number>();
  let max = Number.NEGATIVE_INFINITY;
  let late = 0;
  for (const [key, t, bytes] of records) {
    let counted = false;
    for (let start = Math.floor(t / SLIDE) * SLIDE; start + SIZE > t; start -= SLIDE) {
      if (start + SIZE <= max - latenessMs || closed.has(start)) continue;
      const id = `${start}|${key}`;
      const w = windows.get(id) ?? { n: 0, s: 0 };
      windows.set(id, { n: w.n + 1, s: w.s + Number(bytes ?? 0) });
      counted = true;
    }
    if (!counted) late += 1;
    max = Math.max(max, t);
    for (const id of windows.keys()) {
      const start = Number(id.split("|")[0]);
      if (start + SIZE <= max - latenessMs) closed.add(start);
    }
  }
  const all = [...windows.entries()].map(([id, v]) => ({ start: Number(id.split("|")[0]), key: id.split("|")[1] ?? "", ...v }));
  return { all: all.sort((a, b) => a.start - b.start || (a.key < b.key ? -1 : 1)), late };
}

describe("sliding windows", () => {
  it("counts a record in every window of size that holds it", () => {
    const { open } = run(10_000, [[["a", 1_100, 5]]]);
    expect(open.map((r) => [r.windowStartMs, r.windowEndMs, r.values.n])).toEqual([
      [250, 1_250, 1],
      [500, 1_500, 1],
      [750, 1_750, 1],
      [1_000, 2_000, 1],
    ]);
  });

  it("matches a record-at-a-time reference on random input, whatever the batch boundaries", () => {
    for (let seed = 1; seed <= 40; seed++) {
      const r = rng(seed);
      const lateness = r.int(3) * 300;
      const records: FluxRecord[] = Array.from({ length: 60 }, (_, i) => [`k${r.int(4)}`, i * 40 + r.int(600), r.int(10)]);
      const whole = run(lateness, [records]);
      const split = run(lateness, records.map((rec) => [rec]));
      expect(split, `seed ${seed}`).toEqual(whole);
      const ref = reference(lateness, records);
      const got = [...whole.outputs, ...whole.open].map((o) => ({ start: o.windowStartMs, key: o.key, n: o.values.n, s: o.values.s }));
      expect(got.sort((a, b) => a.start - b.start || (a.key < b.key ? -1 : 1)), `seed ${seed}`).toEqual(ref.all);
      expect(whole.late, `seed ${seed}`).toBe(ref.late);
    }
  });
});
