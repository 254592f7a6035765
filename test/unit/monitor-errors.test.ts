/**
 * The monitor tells a replica that did not answer from a bug (issue 10): failed calls are
 * retried quietly next tick; any other error is logged with its context and kept as a
 * `monitor-error` event (shown by `GET /v1/status`), once per distinct error.
 */
import { describe, expect, it } from "vitest";
import type { MonitorPort } from "../../shared/monitor/monitor-port.ts";
import { runMonitorTick } from "../../shared/monitor/run-monitor-tick.ts";
import type { BeginSeedReply } from "../../shared/wire/replica-rpc.ts";
import { ClusterHarness } from "../helpers/cluster-harness.ts";

const TUNING = { failAfterMisses: 2, locationHints: [], missSpacingMs: 250 };

/** A harness whose partition 0 lost its standby, so the next ticks run a recovery through `port`. */
async function recovering(port: (cluster: MonitorPort) => MonitorPort) {
  const h = new ClusterHarness();
  await h.post({ producer: "c", seq: 1, events: [{ page: "a", ts: 1, bytes: 1 }] });
  h.cluster.inject(h.record.routes[0]?.standby ?? "", "crash");
  const logged: { context: string; err: unknown }[] = [];
  const log = { error: (context: string, err: unknown) => void logged.push({ context, err }) };
  const monitor = port(h.cluster);
  const tick = async () => {
    h.nowMs += 500;
    await runMonitorTick(monitor, h.store, [{ record: h.record, health: h.health }], h.nowMs, TUNING, log);
  };
  return { h, logged, tick };
}

describe("monitor errors", () => {
  it("logs a bug in recovery code with its context and keeps it as one monitor-error event", async () => {
    // A malformed reply (no object at all) makes the recovery code itself throw a TypeError.
    const broken = (cluster: MonitorPort): MonitorPort =>
      Object.assign(Object.create(cluster) as MonitorPort, { beginSeed: async () => null as unknown as BeginSeedReply });
    const { h, logged, tick } = await recovering(broken);
    for (let i = 0; i < 5; i++) await tick();
    expect(h.record.routes[0]?.status).toBe("recovering");
    expect(logged.length).toBeGreaterThan(1);
    expect(logged[0]?.context).toBe("dataflow df partition 0: recovery");
    expect(logged[0]?.err).toBeInstanceOf(TypeError);
    const events = h.record.events.filter((e) => e.kind === "monitor-error");
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ partition: 0, atMs: h.nowMs });
    expect(events[0]?.detail).toMatch(/^recovery: TypeError: /);
  });

  it("retries replicas that do not answer without logging anything", async () => {
    const { h, logged, tick } = await recovering((cluster) => cluster);
    const fresh = () => h.record.routes[0]?.recovery?.replica ?? "";
    await tick();
    await tick();
    expect(fresh()).not.toBe("");
    h.cluster.inject(fresh(), "hang");
    for (let i = 0; i < 3; i++) await tick();
    h.cluster.inject(h.record.routes[0]?.primary ?? "", "slow");
    await tick();
    expect(logged).toEqual([]);
    expect(h.record.events.some((e) => e.kind === "monitor-error")).toBe(false);
  });
});
