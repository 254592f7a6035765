/**
 * Growing a running dataflow (issue 28): `PUT` the same spec with more partitions and its
 * monitor creates the new pairs and moves key groups to them, a few per move, while posts
 * go on; results stay exact (a batch resent after a move is not counted twice), the status
 * shows the groups per partition, the moves under way and each finished move, an old
 * subscription cursor is accepted, and what cannot be done yet is refused with a reason.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { COORDINATOR_NAME } from "../../shared/names.ts";
import { call, clicksSpec, postEvents, results } from "../helpers/api.ts";
import { tick } from "../helpers/fault-client.ts";

const KEYS = Array.from({ length: 24 }, (_, i) => `/page-${i}`);

interface StatusDataflow {
  id: string;
  partitions: { partition: number; keyGroups: number }[];
  moves: { id: number; groups: number[]; from: number; to: number; phase: string }[];
  events: { kind: string; detail: string }[];
}

async function statusOf(id: string): Promise<StatusDataflow> {
  const body = (await (await call("GET", "/v1/status")).json()) as { dataflows: StatusDataflow[] };
  const dataflow = body.dataflows.find((d) => d.id === id);
  if (!dataflow) throw new Error(`status lists no ${id}`);
  return dataflow;
}

/** Posts batch `seq` (one event per key, at `atMs` + seq) until it is acknowledged; a move may refuse it for a while. */
async function post(stream: string, seq: number, atMs = 21_000): Promise<string[]> {
  const refusals: string[] = [];
  const events = KEYS.map((page, i) => ({ page, ts: atMs + seq, bytes: i + seq }));
  for (let attempt = 0; attempt < 50; attempt++) {
    const res = await postEvents(stream, "p", seq, events);
    if (res.status === 200) return refusals;
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(res.status, body.error.message).toBe(503);
    expect(["BACKPRESSURE", "UNAVAILABLE"]).toContain(body.error.code);
    refusals.push(body.error.message);
    await tick(stream.replace("-clicks", ""));
  }
  throw new Error(`batch ${seq} never acknowledged: ${refusals.slice(-3).join(" / ")}; ${JSON.stringify((await statusOf(stream.replace("-clicks", ""))).moves.slice(0, 2))} ${JSON.stringify((await statusOf(stream.replace("-clicks", ""))).events.slice(-3))}`);
}

describe("growing a dataflow", () => {
  it("moves key groups to new partitions while posts go on, with exact results and the moves in the status", async () => {
    expect((await call("PUT", "/v1/dataflows/grow", clicksSpec("grow-clicks", { partitions: 2 }))).status).toBe(201);
    // Window [0, 10 s) gets batches 1 and 2; batch 3 (at 21 s) closes it on both partitions before the rescale.
    for (let seq = 1; seq <= 2; seq++) await post("grow-clicks", seq, 1_000);
    await post("grow-clicks", 3);
    // A subscriber's request caches the record (two partitions) in this isolate.
    const early = await call("GET", "/v1/dataflows/grow/subscribe?cursor=0,0&maxMs=10");
    expect(early.status).toBe(200);
    await early.text();
    const res = await call("PUT", "/v1/dataflows/grow", clicksSpec("grow-clicks", { partitions: 4 }));
    const body = (await res.json()) as { status: string; dataflow: { spec: { partitions: number }; partitions: unknown[] } };
    expect([res.status, body.status, body.dataflow.spec.partitions, body.dataflow.partitions.length]).toEqual([202, "rescaling", 4, 4]);
    // A cursor naming all four partitions is good at once, though this isolate cached two.
    const fourWide = await call("GET", "/v1/dataflows/grow/subscribe?cursor=0,0,0,0&maxMs=10");
    expect(fourWide.status).toBe(200);
    await fourWide.text();
    // 256 groups, 128 per partition before: 64 to each new partition, 4 per move.
    const queued = await statusOf("grow");
    // (The monitor may have run the first ones already.)
    expect(queued.moves.at(-1)?.id).toBe(32);
    expect(queued.moves.every((m) => m.from < 2 && m.to >= 2 && m.groups.length === 4)).toBe(true);
    // Another count while they run is refused, retryably.
    const busy = await call("PUT", "/v1/dataflows/grow", clicksSpec("grow-clicks", { partitions: 8 }));
    expect([busy.status, ((await busy.json()) as { error: { code: string } }).error.code]).toEqual([409, "RESCALE_IN_PROGRESS"]);
    // Posts go on while the monitor's ticks move the groups (at most two per tick).
    let seq = 3;
    for (let round = 0; round < 100 && (await statusOf("grow")).moves.length > 0; round++) {
      await tick("grow");
      seq += 1;
      await post("grow-clicks", seq);
    }
    const done = await statusOf("grow");
    expect(done.moves).toEqual([]);
    expect(done.partitions.map((p) => p.keyGroups)).toEqual([64, 64, 64, 64]);
    expect(done.events.filter((e) => e.kind === "move-finished")).toHaveLength(32);
    expect(done.events.find((e) => e.kind === "move-finished")?.detail).toMatch(/^move 1: key groups \d+, \d+, \d+, \d+ moved from partition 0 to 2; their records waited \d+ ms$/);
    // A batch resent after its keys' groups moved is recognised; every key counted once per batch.
    await post("grow-clicks", 1, 1_000);
    await post("grow-clicks", 3);
    seq += 1;
    await post("grow-clicks", seq);
    const expected = KEYS.flatMap((key) => [
      [key, 0, 2, true],
      [key, 20_000, seq - 2, false],
    ]);
    const shown = (rows: Awaited<ReturnType<typeof results>>) => rows.map((r) => [r.key, r.windowStartMs, r.values.n, r.closed]);
    expect(shown(await results("grow")).sort()).toEqual(expected.sort());
    // One key's results: its closed window is still with its old partition, its open one moved (if its group did).
    for (const key of KEYS.slice(0, 6)) expect(shown(await results("grow", `?key=${encodeURIComponent(key)}`)), key).toEqual(expected.filter((e) => e[0] === key));
    // Keys now reach all four partitions.
    const placed = (await (await postEvents("grow-clicks", "q", 1, KEYS.map((page) => ({ page, ts: 2_000, bytes: 1 })))).json()) as { dataflows: { partitions: { partition: number }[] }[] };
    expect(placed.dataflows[0]?.partitions.map((p) => p.partition).sort()).toEqual([0, 1, 2, 3]);
    // A subscriber's cursor from before (two partitions) is still good: the new partitions are read from their start.
    const feed = await call("GET", "/v1/dataflows/grow/subscribe?cursor=0,0&maxMs=50");
    expect(feed.status).toBe(200);
    await feed.body?.cancel();
    const tooLong = await call("GET", "/v1/dataflows/grow/subscribe?cursor=0,0,0,0,0&maxMs=50");
    expect(tooLong.status).toBe(400);
  });

  it("answers a PUT retried after the registry missed the growth (the monitor stored it) with the grown dataflow, and repairs the registry", async () => {
    expect((await call("PUT", "/v1/dataflows/retried", clicksSpec("retried-clicks", { partitions: 2 }))).status).toBe(201);
    expect((await call("PUT", "/v1/dataflows/retried", clicksSpec("retried-clicks", { partitions: 3 }))).status).toBe(202);
    // As if the registry's call to the monitor had failed after the monitor stored the grown record: the entry still says 2.
    await runInDurableObject(env.COORDINATOR.getByName(COORDINATOR_NAME), (_instance, state) => {
      const entry = state.storage.kv.get<{ spec: { partitions: number } }>("entry:retried");
      if (!entry) throw new Error("no registry entry");
      entry.spec.partitions = 2;
      state.storage.kv.put("entry:retried", entry);
    });
    const retried = await call("PUT", "/v1/dataflows/retried", clicksSpec("retried-clicks", { partitions: 3 }));
    const body = (await retried.json()) as { status: string; dataflow: { partitions: unknown[] } };
    // Its moves may still run (202), or have ended (200): either way the dataflow has 3 partitions.
    expect([202, 200]).toContain(retried.status);
    expect(body.dataflow.partitions).toHaveLength(3);
    await runInDurableObject(env.COORDINATOR.getByName(COORDINATOR_NAME), (_instance, state) => {
      expect(state.storage.kv.get<{ spec: { partitions: number } }>("entry:retried")?.spec.partitions).toBe(3);
    });
  });

  it("refuses what it cannot do yet, with a reason, and changes nothing", async () => {
    expect((await call("PUT", "/v1/dataflows/fixed", clicksSpec("fixed-clicks", { partitions: 3 }))).status).toBe(201);
    const lower = await call("PUT", "/v1/dataflows/fixed", clicksSpec("fixed-clicks", { partitions: 2 }));
    const error = ((await lower.json()) as { error: { code: string; message: string; details: { changed: string[] } } }).error;
    expect([lower.status, error.code, error.details.changed]).toEqual([409, "SPEC_CONFLICT", ["partitions"]]);
    expect(error.message).toBe("dataflow 'fixed' has 3 partitions: lowering the count is not built yet (only growing it is); delete and recreate it, or keep 3");
    // Another field changed with it: a conflict as before.
    const both = await call("PUT", "/v1/dataflows/fixed", clicksSpec("fixed-clicks", { partitions: 4, window: { kind: "tumbling", sizeMs: 5_000 } }));
    expect(both.status).toBe(409);
    expect(((await both.json()) as { error: { details: { changed: string[] } } }).error.details.changed).toEqual(["partitions", "window"]);
    const shown = (await (await call("GET", "/v1/dataflows/fixed")).json()) as { dataflow: { partitions: unknown[] } };
    expect(shown.dataflow.partitions).toHaveLength(3);
    expect((await statusOf("fixed")).moves).toEqual([]);
  });
});
