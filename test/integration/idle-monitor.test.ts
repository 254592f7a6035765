/**
 * An idle dataflow costs (almost) nothing (issue 12, deliverable 6): once no replica's LSN
 * moves, the coordinator arms its alarm for the idle probe interval instead of every
 * heartbeat, and a tick that finds nothing new writes no row. Progress, or a router's
 * report, brings back the heartbeat. (This project: heartbeat 1 h, idle after one quiet
 * probe, idle probe once a day.)
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
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

describe("an idle dataflow", () => {
  it("is probed a day apart instead of every heartbeat, with no row written, until it moves again", async () => {
    const { id, stream } = await createDataflow({ partitions: 2 });
    expect((await postEvents(stream, "p", 1, [{ page: "a", ts: 1, bytes: 1 }])).status).toBe(200);
    await tick();
    expect(await alarmInMs()).toBeLessThanOrEqual(HOUR_MS);
    // The next probe sees no LSN move: idle from now on.
    await tick();
    expect(await alarmInMs()).toBeGreaterThan(DAY_MS - HOUR_MS);

    // A day later (the alarm stands for its time): probed once, nothing stored.
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

  it("is probed at once when a router reports one of its replicas", async () => {
    const { id } = await createDataflow({ partitions: 1 });
    await tick();
    await tick();
    expect(await alarmInMs()).toBeGreaterThan(DAY_MS - HOUR_MS);
    const replica = Object.keys(await coordinator().health(id))[0] ?? "";
    await coordinator().reportFailure(replica);
    expect(await alarmInMs()).toBeLessThanOrEqual(1_000);
  });
});
