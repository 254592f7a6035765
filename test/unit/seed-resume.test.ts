/**
 * A coordinator restarted in the middle of seeding a fresh standby (issue 12): the record
 * no longer carries how many chunks were copied, so the resumed monitor asks the fresh
 * replica and goes on from the first chunk it does not hold: every chunk is staged once,
 * none skipped, and the results stay exact. The record is written only on phase changes.
 */
import { describe, expect, it } from "vitest";
import type { MonitorPort } from "../../shared/monitor/monitor-port.ts";
import type { DataflowRecord } from "../../shared/wire/routing.ts";
import { ClusterHarness, type Batch } from "../helpers/cluster-harness.ts";

const batch = (seq: number): Batch => ({ producer: "c", seq, events: [{ page: `key${seq}`, ts: seq * 100, bytes: seq }] });

/** A harness whose monitor record lives in a store like the coordinator's: written only when it changed. */
function restartableHarness() {
  // Two keys per slice: the seed of 40 keys has many chunks.
  const h = new ClusterHarness({ partitions: 1 }, 2, 2);
  let saved = structuredClone(h.record);
  const writes: string[] = [];
  h.store = {
    released: () => new Map(),
    save: async (record) => {
      if (JSON.stringify(record) === JSON.stringify(saved)) return;
      saved = structuredClone(record);
      writes.push(record.routes[0]?.recovery?.phase ?? record.routes[0]?.status ?? "");
    },
  };
  /** The coordinator restarts: its memory of the record is what it last saved. */
  const restart = () => Object.assign(h.record, structuredClone(saved) satisfies DataflowRecord);
  return { h, writes, restart };
}

/** The real port, recording which chunks reach the fresh replica and failing calls once `dead()` says so. */
function countingPort(real: MonitorPort, staged: number[], dead: () => boolean, whenDead: "before" | "after"): MonitorPort {
  return {
    ...real,
    acceptSeedChunk: async (name, id, index, body, spec) => {
      if (dead() && whenDead === "before") throw new Error("monitor died");
      const reply = await real.acceptSeedChunk(name, id, index, body, spec);
      if (reply.status === "ok") staged.push(index);
      if (dead() && whenDead === "after") throw new Error("monitor died with the reply in flight");
      return reply;
    },
  };
}

describe("a coordinator restarted mid-seed", () => {
  for (const whenDead of ["before", "after"] as const) {
    it(`resumes at the first chunk the fresh replica lacks (died ${whenDead} a chunk was staged): each chunk once`, async () => {
      const { h, writes, restart } = restartableHarness();
      for (let seq = 1; seq <= 40; seq++) await h.post(batch(seq));
      h.cluster.inject(h.record.routes[0]?.standby ?? "", "crash");
      const staged: number[] = [];
      const real = h.monitorPort;
      h.monitorPort = countingPort(real, staged, () => staged.length >= 5, whenDead);
      // Takeover, then seeding until the monitor dies after 5 chunks.
      for (let i = 0; i < 4 && staged.length < 5; i++) await h.tick();
      expect(staged).toEqual([0, 1, 2, 3, 4]);
      const chunks = h.record.routes[0]?.recovery?.snapshot?.chunks ?? 0;
      expect(chunks).toBeGreaterThan(10);
      restart();
      h.monitorPort = countingPort(real, staged, () => false, whenDead);
      await h.settle();
      expect(staged).toEqual(Array.from({ length: chunks }, (_, i) => i));
      expect(h.record.events.map((e) => e.kind)).toContain("recovery-finished");
      expect(h.record.events.map((e) => e.kind)).not.toContain("recovery-restarted");
      for (let seq = 41; seq <= 45; seq++) await h.post(batch(seq));
      await h.expectExactResults("after a seed resumed by a restarted coordinator");
      // Written on the takeover and on phase changes only, never per chunk.
      expect(writes.length).toBeLessThan(12);
    });
  }

  it("finishes an install whose phase change a restart lost", async () => {
    const { h, restart } = restartableHarness();
    for (let seq = 1; seq <= 20; seq++) await h.post(batch(seq));
    h.cluster.inject(h.record.routes[0]?.standby ?? "", "crash");
    const real = h.monitorPort;
    let installed = false;
    h.monitorPort = {
      ...real,
      finishSeed: async (name, msg) => {
        const reply = await real.finishSeed(name, msg);
        installed = true;
        throw new Error(`monitor died after the install (${reply.status})`);
      },
    };
    for (let i = 0; i < 6 && !installed; i++) await h.tick();
    expect(installed).toBe(true);
    restart();
    expect(h.record.routes[0]?.recovery?.phase).toBe("seeding");
    h.monitorPort = real;
    await h.settle();
    expect(h.record.events.map((e) => e.kind)).not.toContain("recovery-restarted");
    await h.expectExactResults("after an install resumed by a restarted coordinator");
  });
});

describe("pacing a seed", () => {
  /** Seeds a fresh standby of a 40-key partition, posting `during` batches between ticks; returns what the monitor told the pacer. */
  async function seedWith(during: number) {
    const { h } = restartableHarness();
    for (let seq = 1; seq <= 40; seq++) await h.post(batch(seq));
    h.cluster.inject(h.record.routes[0]?.standby ?? "", "crash");
    const paced: boolean[] = [];
    let seq = 40;
    h.monitorPort = {
      ...h.cluster,
      paceSeed: async (ingestActive) => {
        paced.push(ingestActive);
        // Writes arrive while the monitor pauses, as they would between copy steps.
        for (let i = 0; i < during; i++) await h.postOnce(batch(++seq));
      },
    };
    // Two missed probes declare the standby failed; then the seed runs until healthy.
    await h.tick();
    await h.tick();
    expect(h.record.routes[0]?.status).toBe("recovering");
    await h.settle();
    await h.expectExactResults(`after a seed with ${during} writes per pause`);
    return paced;
  }

  it("tells the pacer the survivor takes no writes after the first step of an idle partition", async () => {
    const paced = await seedWith(0);
    expect(paced.length).toBeGreaterThan(10);
    // The first step has nothing to compare with: counted as active.
    expect(paced.slice(1).every((active) => !active)).toBe(true);
  });

  it("tells the pacer the survivor takes writes while they arrive", async () => {
    const paced = await seedWith(1);
    expect(paced.length).toBeGreaterThan(10);
    expect(paced.every((active) => active)).toBe(true);
  });
});
