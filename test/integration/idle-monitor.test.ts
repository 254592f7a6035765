/**
 * An idle dataflow costs (almost) nothing (issue 12, deliverable 6): once no replica's LSN
 * moves, its monitor (issue 29: one object per dataflow) arms its alarm for the idle probe
 * interval instead of every heartbeat, and a tick that finds nothing new writes no row. Progress, or a router's
 * report, brings back the heartbeat. (This project: heartbeat 1 h, idle after one quiet
 * probe, idle probes at most a day apart; the time without traffic is set in the stored
 * idle marker, since tests do not wait.)
 */
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { HealthMap } from "../../shared/wire/routing.ts";
import { createDataflow, postEvents } from "../helpers/api.ts";
import { monitorOf, tick } from "../helpers/fault-client.ts";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** How far ahead the alarm of `id`'s monitor is armed, ms. */
async function alarmInMs(id: string): Promise<number> {
  const at = await runInDurableObject(monitorOf(id), (_instance, state) => state.storage.getAlarm());
  return (at ?? Number.NaN) - Date.now();
}

/** Runs `during` while counting the key-value writes and deletes of `id`'s monitor. */
async function countingWrites(id: string, during: () => Promise<void>): Promise<number> {
  let writes = 0;
  const restore = await runInDurableObject(monitorOf(id), (_instance, state) => {
    const kv = state.storage.kv;
    const put = kv.put.bind(kv);
    const remove = kv.delete.bind(kv);
    kv.put = (key: string, value: unknown) => ((writes += 1), put(key, value));
    kv.delete = (key: string) => ((writes += 1), remove(key));
    return () => {
      kv.put = put;
      kv.delete = remove;
    };
  });
  await during();
  await runInDurableObject(monitorOf(id), () => restore());
  return writes;
}

const heartbeats = (health: HealthMap) => Object.values(health).map((h) => h.lastOkAtMs);

/** What `id`'s monitor last saw of each replica. */
async function healthOf(id: string): Promise<HealthMap> {
  return (await monitorOf(id).view())?.health ?? {};
}

/** Makes the stored idle marker of `id` say its LSNs last moved a day earlier, as after a day without traffic. */
async function quietForADay(id: string): Promise<void> {
  await runInDurableObject(monitorOf(id), (_instance, state) => {
    const marker = state.storage.kv.get<{ v: 1; fingerprint: string; quietSinceMs: number }>(`idle:${id}`);
    expect(marker).toBeDefined();
    if (marker) state.storage.kv.put(`idle:${id}`, { ...marker, quietSinceMs: marker.quietSinceMs - DAY_MS });
  });
  // A fresh instance (as after hibernation) reads its pace from the marker.
  await evictDurableObject(monitorOf(id));
}

describe("an idle dataflow", () => {
  it("is probed a day apart instead of every heartbeat, with no row written, until it moves again", async () => {
    const { id, stream } = await createDataflow({ partitions: 2 });
    expect((await postEvents(stream, "p", 1, [{ page: "a", ts: 1, bytes: 1 }])).status).toBe(200);
    await tick();
    expect(await alarmInMs(id)).toBeLessThanOrEqual(HOUR_MS);
    // The next probe sees no LSN move: idle from now on (one write: the idle marker).
    expect(await countingWrites(id, () => tick())).toBe(1);
    await quietForADay(id);

    // Probed once when due, and then not for another day; nothing stored.
    expect(await countingWrites(id, () => tick())).toBe(0);
    expect(await alarmInMs(id)).toBeGreaterThan(DAY_MS - HOUR_MS);
    const before = heartbeats(await healthOf(id));
    expect(await countingWrites(id, () => tick())).toBe(0);
    const after = heartbeats(await healthOf(id));
    expect(after).toHaveLength(4);
    for (const [i, at] of after.entries()) expect(at).toBeGreaterThan(before[i] ?? Number.POSITIVE_INFINITY);
    expect(await alarmInMs(id)).toBeGreaterThan(DAY_MS - HOUR_MS);

    // Traffic resumes: the next probe sees the LSNs move, and the heartbeat is back
    // (one write: the stored idle marker goes).
    expect((await postEvents(stream, "p", 2, [{ page: "b", ts: 2, bytes: 1 }])).status).toBe(200);
    expect(await countingWrites(id, () => tick())).toBe(1);
    expect(await alarmInMs(id)).toBeLessThanOrEqual(HOUR_MS);
  });

  it("is left out of the heartbeats of an active one, and probed at once when a router reports one of its replicas", async () => {
    const active = await createDataflow({ partitions: 1 });
    expect((await postEvents(active.stream, "p", 1, [{ page: "a", ts: 1, bytes: 1 }])).status).toBe(200);
    const { id } = await createDataflow({ partitions: 1 });
    await tick();
    await tick();
    await quietForADay(id);
    expect((await postEvents(active.stream, "p", 2, [{ page: "a", ts: 2, bytes: 1 }])).status).toBe(200);
    await tick();
    // The other dataflow is active: its own monitor keeps the heartbeat; this one's waits a day.
    expect(await alarmInMs(active.id)).toBeLessThanOrEqual(HOUR_MS);
    expect(await alarmInMs(id)).toBeGreaterThan(DAY_MS - HOUR_MS);
    const quiet = heartbeats(await healthOf(id));
    await tick(active.id);
    expect(heartbeats(await healthOf(id))).toEqual(quiet);
    const replica = Object.keys(await healthOf(id))[0] ?? "";
    // A tick ran just now: the report arms the alarm one miss spacing later, and that tick probes it.
    await monitorOf(id).reportFailure(replica);
    expect(await alarmInMs(id)).toBeLessThanOrEqual(1_000);
    await tick(id);
    const reported = heartbeats(await healthOf(id));
    expect(reported[0]).toBeGreaterThan(quiet[0] ?? Number.POSITIVE_INFINITY);
  });
});
