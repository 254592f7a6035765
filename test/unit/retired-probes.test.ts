/**
 * Retired replicas (issue 12, deliverable 5): their probes never hold up a tick's
 * decisions, and one that keeps missing is probed ever more rarely, so a hung replica
 * that was replaced cannot stretch every later tick by a probe timeout.
 */
import { describe, expect, it } from "vitest";
import type { MonitorPort } from "../../shared/monitor/monitor-port.ts";
import { noteRetiredProbes, retiredDue, retiredReplicas } from "../../shared/monitor/retired-probes.ts";
import type { HealthMap } from "../../shared/wire/routing.ts";
import { ClusterHarness } from "../helpers/cluster-harness.ts";
import { record, spec } from "../helpers/fixtures.ts";

const miss = { ok: false as const, error: "did not answer in time" };

describe("retired probes", () => {
  it("backs off a retired replica that keeps missing, and probes it at once when it answered last", () => {
    const r = record("df", spec({ partitions: 1 }));
    const route = r.routes[0];
    if (!route) throw new Error("no route");
    route.retired.push("old");
    const health: HealthMap = {};
    expect(retiredDue(retiredReplicas(r), health, 0, 250)).toEqual(["old"]);
    const dueAt: number[] = [];
    for (let now = 0; now <= 20_000; now += 50) {
      if (retiredDue(retiredReplicas(r), health, now, 250).length === 0) continue;
      dueAt.push(now);
      noteRetiredProbes(health, new Map([["old", miss]]), now);
    }
    // 250 ms after the first miss, then 500, 1000, 2000, 4000, 8000 ms apart.
    expect(dueAt).toEqual([0, 250, 750, 1750, 3750, 7750, 15750]);
    noteRetiredProbes(health, new Map([["old", { ok: true, status: null }]]), 20_000);
    expect(retiredDue(retiredReplicas(r), health, 20_000, 250)).toEqual(["old"]);
  });

  it("fails over while a replaced replica's probe is still unanswered", async () => {
    const h = new ClusterHarness();
    await h.post({ producer: "c", seq: 1, events: [{ page: "a", ts: 1, bytes: 1 }] });
    const route = h.record.routes[0];
    if (!route) throw new Error("no route");
    // The standby fails and is replaced; from then on its probes never answer.
    const old = route.standby ?? "";
    h.cluster.inject(old, "crash");
    for (let i = 0; i < 3 && !route.retired.includes(old); i++) await h.tick();
    expect(route.retired).toContain(old);
    // Now the primary fails too; one tick counts its first miss.
    h.cluster.inject(route.primary, "crash");
    await h.tick();
    expect(route.status).not.toBe("unavailable");
    // The next tick must turn the partition unavailable while the retired replica's probe is still unanswered.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let retiredProbed = false;
    h.monitorPort = Object.assign(Object.create(h.cluster) as MonitorPort, {
      probe: async (name: string) => {
        if (name === old) {
          retiredProbed = true;
          await held;
        }
        return h.cluster.probe(name);
      },
    });
    h.nowMs += 10_000; // past the retired replica's back-off
    const tick = h.tick();
    for (let i = 0; i < 1000 && route.status !== "unavailable"; i++) await new Promise((r) => setTimeout(r, 0));
    const decidedWhileHeld = route.status === "unavailable";
    release();
    await tick;
    expect(retiredProbed).toBe(true);
    expect(decidedWhileHeld).toBe(true);
  });
});
