/**
 * The upgrade to the control plane that scales out (issue 29, deliverable 4). A deployment
 * from before it kept every dataflow's record, probe history, idle marker and tombstone in
 * the one object named "coordinator". This rebuilds that layout from live dataflows (a plain
 * one with a declared stream, a stage reading it, one deleted), wipes the monitors, the
 * directory and the registry's entries, and checks that the first router to need the stream
 * moves everything over: routing, state, dedup memory, stage links and tombstones survive.
 */
import { env } from "cloudflare:workers";
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { COORDINATOR_NAME, directoryName } from "../../shared/names.ts";
import { call, clicksSpec, postEvents, results } from "../helpers/api.ts";
import { monitorOf } from "../helpers/fault-client.ts";

const registry = () => env.COORDINATOR.getByName(COORDINATOR_NAME);
const events = (seq: number) => ["a", "b", "c", "d"].map((page) => ({ page, ts: seq * 1_000, bytes: seq }));

/** Moves what `id`'s monitor holds into the registry under the old keys, then wipes the monitor. */
async function downgrade(id: string): Promise<void> {
  const old = await runInDurableObject(monitorOf(id), async (_instance, state) => {
    const kv = state.storage.kv;
    const moved = Object.fromEntries([`dataflow:${id}`, `health:${id}`, `idle:${id}`, `tombstone:${id}`].flatMap((key) => (kv.get(key) === undefined ? [] : [[key, kv.get(key)]])));
    await state.storage.deleteAlarm();
    await state.storage.deleteAll();
    return moved;
  });
  await runInDurableObject(registry(), (_instance, state) => {
    for (const [key, value] of Object.entries(old)) state.storage.kv.put(key, value);
    state.storage.kv.delete(`entry:${id}`);
  });
  await evictDurableObject(monitorOf(id));
}

describe("a deployment upgraded from the single coordinator", () => {
  it("keeps its dataflows, their routing, state and links, and its tombstones", async () => {
    const stream = "upgraded-clicks";
    expect((await call("PUT", `/v1/streams/${stream}`, { fields: { page: { type: "string" }, ts: { type: "time" }, bytes: { type: "number" } } })).status).toBe(201);
    expect((await call("PUT", "/v1/dataflows/up", clicksSpec(stream, { partitions: 2, idleAdvanceMs: 1000 }))).status).toBe(201);
    const stage = { from: "up", key: "key", partitions: 1, window: { kind: "tumbling", sizeMs: 60_000 }, aggregates: { n: { op: "sum", field: "values.n" } } };
    expect((await call("PUT", "/v1/dataflows/st", stage)).status).toBe(201);
    expect((await call("PUT", "/v1/dataflows/gone", clicksSpec("gone-clicks", { partitions: 1 }))).status).toBe(201);
    expect((await call("DELETE", "/v1/dataflows/gone")).status).toBe(200);
    for (let seq = 1; seq <= 3; seq++) expect((await postEvents(stream, "p", seq, events(seq))).status).toBe(200);
    const before = await results("up");
    const routingBefore = ((await (await call("GET", "/v1/dataflows/up")).json()) as { dataflow: unknown }).dataflow;

    for (const id of ["up", "st", "gone"]) await downgrade(id);
    await runInDurableObject(env.STREAM_DIRECTORY.getByName(directoryName(stream)), (_instance, state) => state.storage.deleteAll());
    await evictDurableObject(env.STREAM_DIRECTORY.getByName(directoryName(stream)));
    await evictDurableObject(registry());
    // Routers' and readers' caches (1 s here) have expired: the next post looks the stream up afresh.
    await new Promise((resolve) => setTimeout(resolve, 1_100));

    // A resend is recognised (dedup memory kept), a new batch counted once.
    const resent = await postEvents(stream, "p", 3, events(3));
    expect(resent.status).toBe(200);
    expect(((await resent.json()) as { duplicate: boolean }).duplicate).toBe(true);
    expect((await postEvents(stream, "p", 4, events(4))).status).toBe(200);
    const after = await results("up");
    expect(after.map((r) => [r.key, r.values.n])).toEqual(before.map((r) => [r.key, Number(r.values.n) + 1]));
    expect(((await (await call("GET", "/v1/dataflows/up")).json()) as { dataflow: unknown }).dataflow).toEqual(routingBefore);
    const listed = (await (await call("GET", "/v1/dataflows")).json()) as { dataflows: { id: string; readers: string[] }[] };
    expect(listed.dataflows.map((d) => [d.id, d.readers])).toEqual([["st", []], ["up", ["st"]]]);
    // The declared schema still holds at the door.
    expect((await postEvents(stream, "p", 5, [{ page: 7, ts: 1, bytes: 1 }])).status).toBe(400);
    // Nothing of the old layout is left, and the monitor watches again (its alarm is armed).
    const left = await runInDurableObject(registry(), (_instance, state) => [...state.storage.kv.list()].map(([key]) => key).filter((key) => !key.startsWith("entry:") && !key.startsWith("stream:")));
    expect(left).toEqual([]);
    expect(await runDurableObjectAlarm(monitorOf("up"))).toBe(true);
    // The deleted dataflow's tombstone moved too: created again, it starts above its old epoch.
    const again = await call("PUT", "/v1/dataflows/gone", clicksSpec("gone-clicks", { partitions: 1 }));
    expect(again.status).toBe(201);
    expect(((await again.json()) as { dataflow: { partitions: { epoch: number }[] } }).dataflow.partitions[0]?.epoch).toBe(2);
  });
});
