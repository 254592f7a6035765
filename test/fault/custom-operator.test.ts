/**
 * The custom-operator example under replication (issue 6): the heavy-hitters detector
 * runs in workerd while the primary of a partition crashes and later returns. Its alerts
 * — served results and the live subscription — equal one run of the operator over each
 * acknowledged batch once, exactly as for the built-in aggregates.
 */
import { describe, expect, it } from "vitest";
import { compileDataflow } from "../../shared/operators/compile.ts";
import { DataflowSpecSchema } from "../../shared/dataflow-checks/dataflow-spec-schema.ts";
import type { FluxRecord, WindowResult } from "../../shared/wire/window-result.ts";
import { createDataflow, results, subscribe } from "../helpers/api.ts";
import { fault, postUntilAcked, routing, tickUntilHealthy } from "../helpers/fault-client.ts";

const SOURCES = ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6"];
const detector = {
  key: "src",
  timeField: "ts",
  window: undefined,
  aggregates: undefined,
  operator: { name: "heavy-hitters", params: { windowMs: 1000, minBytes: 3000, destinationField: "dst", minDestinations: 4 } },
  partitions: 2,
};

type Flow = { src: string; ts: number; bytes: number; dst: string };

/** Source 0 floods, source 1 scans, the others are benign; times only grow, so nothing is late. */
function flows(seq: number): Flow[] {
  return SOURCES.map((src, i) => ({
    src,
    ts: seq * 250 + i,
    bytes: i === 0 ? 900 : 10 + i,
    dst: i === 1 ? `192.168.0.${seq}` : "192.168.1.1",
  }));
}

const view = (r: Pick<WindowResult, "key" | "windowStartMs" | "values">) => ({ key: r.key, windowStartMs: r.windowStartMs, values: r.values });

describe("the heavy-hitters operator under a primary crash", () => {
  it("alerts exactly once: results and subscription equal the reference", async () => {
    const { id, stream } = await createDataflow(detector);
    const victim = (await routing(id))[0]?.primary ?? "";
    const acked: Flow[][] = [];
    const statuses: number[] = [];
    for (let seq = 1; seq <= 20; seq++) {
      if (seq === 5) expect((await fault(victim, "crash")).status).toBe(200);
      if (seq === 14) expect((await fault(victim, "heal")).status).toBe(200);
      const batch = seq === 20 ? SOURCES.map((src) => ({ src, ts: 100_000, bytes: 1, dst: "x" })) : flows(seq);
      statuses.push(...(await postUntilAcked(stream, "collector", seq, batch)));
      acked.push(batch);
    }
    await tickUntilHealthy(id);
    // The crash had an effect: posts were refused until the standby took over, and the victim was replaced.
    expect(statuses).toContain(503);
    expect((await routing(id))[0]?.primary).not.toBe(victim);

    const spec = DataflowSpecSchema.parse({ stream, ...detector });
    const operator = compileDataflow(spec).bind();
    const expected: WindowResult[] = [];
    for (const batch of acked) operator.process(batch.map((f): FluxRecord => [f.src, f.ts, f.bytes, f.dst]), (r) => expected.push(r));
    const byPosition = (a: WindowResult, b: WindowResult) => a.windowStartMs - b.windowStartMs || (a.key < b.key ? -1 : 1);
    expected.sort(byPosition);
    // The flood and the scan are caught in every window; benign sources never are.
    expect(new Set(expected.map((r) => r.key))).toEqual(new Set(["10.0.0.1", "10.0.0.2"]));
    expect(expected.length).toBeGreaterThanOrEqual(8);

    const served = await results(id);
    expect(served.every((r) => r.closed)).toBe(true);
    expect(served.map(view)).toEqual(expected.map(view));

    const events = await subscribe(id, 300);
    expect(events.map((e) => view(e.data)).sort((a, b) => a.windowStartMs - b.windowStartMs || (a.key < b.key ? -1 : 1))).toEqual(expected.map(view));
  });
});
