/**
 * An idle dataflow costs (almost) nothing (issue 12, deliverable 6): once no replica's LSN
 * moves, the coordinator arms its alarm for the idle probe interval instead of every
 * heartbeat, and a tick that finds nothing new writes no row. Progress, or a router's
 * report, brings back the heartbeat. (This project: heartbeat 1 h, idle after one quiet
 * probe, idle probes at most a day apart; the time without traffic is set in the stored
 * idle marker, since tests do not wait.)
 */
import { env } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { COORDINATOR_NAME } from "../../shared/names.ts";
import type { HealthMap } from "../../shared/wire/routing.ts";
import { createDataflow, postEvents } from "../helpers/api.ts";
import { tick } from "../helpers/fault-client.ts";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const coordinator = () => env.COORDINATOR.getByName(COORDINATOR_NAME);

/** How far ahead the coordinator's alarm is armed, ms. */
async function alarmInMs(): Promise<number> {
  const at = await runInDurableObject(coordinator(), (_instance, state) => state.storage.getAlarm());
  return (at ?? Number.NaN) - Date.now();
}

/** Runs `during` while counting the coordinator's key-value writes and deletes. */
async function countingWrites(during: () => Promise<void>): Promise<number> {
  let writes = 0;
  const restore = await runInDurableObject(coordinator(), (_instance, state) => {
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
  await runInDurableObject(coordinator(), () => restore());
  return writes;
}

const heartbeats = (health: HealthMap) => Object.values(health).map((h) => h.lastOkAtMs);

/** Makes the stored idle marker of `id` say its LSNs last moved a day earlier, as after a day without traffic. */
async function quietForADay(id: string): Promise<void> {
  await runInDurableObject(coordinator(), (_instance, state) => {
    const marker = state.storage.kv.get<{ v: 1; fingerprint: string; quietSinceMs: number }>(`idle:${id}`);
    expect(marker).toBeDefined();
    if (marker) state.storage.kv.put(`idle:${id}`, { ...marker, quietSinceMs: marker.quietSinceMs - DAY_MS });
  });
  // A fresh instance (as after hibernation) reads its pace from the marker.
  await evictDurableObject(coordinator());
}

describe("an idle dataflow", () => {
  it("is probed a day apart instead of every heartbeat, with no row written, until it moves again", async () => {
    const { id, stream } = await createDataflow({ partitions: 2 });
    expect((await postEvents(stream, "p", 1, [{ page: "a", ts: 1, bytes: 1 }])).status).toBe(200);
    await tick();
    expect(await alarmInMs()).toBeLessThanOrEqual(HOUR_MS);
    // The next probe sees no LSN move: idle from now on (one write: the idle marker).
    expect(await countingWrites(() => tick())).toBe(1);
    await quietForADay(id);

    // Probed once when due, and then not for another day; nothing stored.
    expect(await countingWrites(() => tick())).toBe(0);
    expect(await alarmInMs()).toBeGreaterThan(DAY_MS - HOUR_MS);
    const before = heartbeats(await coordinator().health(id));
    expect(await countingWrites(() => tick())).toBe(0);
    const after = heartbeats(await coordinator().health(id));
    expect(after).toHaveLength(4);
    for (const [i, at] of after.entries()) expect(at).toBeGreaterThan(before[i] ?? Number.POSITIVE_INFINITY);
    expect(await alarmInMs()).toBeGreaterThan(DAY_MS - HOUR_MS);

    // Traffic resumes: the next probe sees the LSNs move, and the heartbeat is back
    // (one write: the stored idle marker goes).
    expect((await postEvents(stream, "p", 2, [{ page: "b", ts: 2, bytes: 1 }])).status).toBe(200);
    expect(await countingWrites(() => tick())).toBe(1);
    expect(await alarmInMs()).toBeLessThanOrEqual(HOUR_MS);
  });

  it("is left out of the heartbeats of an active one, and probed at once when a router reports one of its replicas", async () => {
    const { id } = await createDataflow({ partitions: 1 });
    await tick();
    await tick();
    await quietForADay(id);
    await tick();
    // The first test's dataflow is active: its heartbeat alarm does not probe this one.
    expect(await alarmInMs()).toBeLessThanOrEqual(HOUR_MS);
    const quiet = heartbeats(await coordinator().health(id));
    await tick();
    expect(heartbeats(await coordinator().health(id))).toEqual(quiet);
    const replica = Object.keys(await coordinator().health(id))[0] ?? "";
    // A tick ran just now: the report arms the alarm one miss spacing later, and that tick probes it.
    await coordinator().reportFailure(replica);
    expect(await alarmInMs()).toBeLessThanOrEqual(1_000);
    await tick();
    const reported = heartbeats(await coordinator().health(id));
    expect(reported[0]).toBeGreaterThan(quiet[0] ?? Number.POSITIVE_INFINITY);
  });
});
