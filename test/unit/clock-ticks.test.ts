/**
 * Clock ticks for idle partitions (issue 6): the monitor writes ticks into each
 * partition's log, so windows close without new events, identically on both replicas,
 * and a fail-over neither loses nor repeats the results a tick closed.
 */
import { describe, expect, it } from "vitest";
import { ClusterHarness, type Batch } from "../helpers/cluster-harness.ts";

const window = { kind: "tumbling", sizeMs: 1000, allowedLatenessMs: 0 };
const events = (seq: number): Batch => ({ producer: "c", seq, events: ["a", "b", "c", "d"].map((page, i) => ({ page, ts: 100 + 10 * seq + i, bytes: seq })) });

/** Closed outputs of both replicas of every partition, as stored. */
function storedOutputs(h: ClusterHarness) {
  return h.record.routes.map((route) => ({
    primary: h.cluster.storages.get(route.primary)?.outputs ?? [],
    standby: route.standby ? (h.cluster.storages.get(route.standby)?.outputs ?? []) : null,
  }));
}

describe("clock ticks", () => {
  it("close idle windows on primary and standby alike once wall time passes end + idleAdvanceMs", async () => {
    const h = new ClusterHarness({ window, idleAdvanceMs: 1500 });
    for (let seq = 1; seq <= 3; seq++) await h.post(events(seq));
    // Ticks at 500..2000 ms vouch for event times up to 500 ms: nothing closes yet.
    for (let i = 0; i < 4; i++) await h.tick();
    expect(storedOutputs(h).flatMap((p) => p.primary)).toEqual([]);
    await h.tick(); // 2500 ms - 1500 ms reaches the window's end at 1000 ms
    const stored = storedOutputs(h);
    expect(stored.flatMap((p) => p.primary).map((o) => o.result.key).sort()).toEqual(["a", "b", "c", "d"]);
    for (const { primary, standby } of stored) expect(standby).toEqual(primary);
    const { results } = await h.results();
    expect(results.every((r) => r.closed)).toBe(true);
    expect(results.map((r) => r.values.n)).toEqual([3, 3, 3, 3]);
    // A record for the closed window is now late on both replicas.
    await h.post({ producer: "c", seq: 4, events: [{ page: "a", ts: 999, bytes: 1 }] });
    await h.tick();
    const late = h.record.routes.map((route) => h.cluster.host(route.primary).status()?.lateRecords ?? 0);
    expect(late.reduce((a, b) => a + b, 0)).toBe(1);
  });

  it("are not written for dataflows without idleAdvanceMs", async () => {
    const h = new ClusterHarness({ window });
    await h.post(events(1));
    for (let i = 0; i < 10; i++) await h.tick();
    expect(storedOutputs(h).flatMap((p) => p.primary)).toEqual([]);
    expect(h.record.routes.map((route) => h.cluster.host(route.primary).status()?.lsn)).toEqual([1, 1]);
  });

  it("survive a primary crash: the promoted standby has the same closed results, once", async () => {
    const h = new ClusterHarness({ window, idleAdvanceMs: 0 });
    for (let seq = 1; seq <= 3; seq++) await h.post(events(seq));
    await h.tick();
    await h.tick(); // 1000 ms: window [0, 1000) closes
    const before = storedOutputs(h);
    const old = h.record.routes[0]?.primary ?? "";
    h.cluster.inject(old, "crash");
    for (let i = 0; i < 3; i++) await h.tick(); // missed probes, then the takeover
    await h.settle();
    expect(h.record.routes[0]?.primary).not.toBe(old);
    const after = storedOutputs(h);
    expect(after[0]?.primary).toEqual(before[0]?.primary);
    expect(after[0]?.standby).toEqual(before[0]?.primary);
    const { results } = await h.results();
    expect(results.every((r) => r.closed)).toBe(true);
    expect(results.map((r) => [r.key, r.values.n])).toEqual([["a", 3], ["b", 3], ["c", 3], ["d", 3]]);
  });

  it("let a partition that only receives ticks checkpoint and trim its log now and then", async () => {
    const h = new ClusterHarness({ window, idleAdvanceMs: 1_000_000_000 });
    const pages = Array.from({ length: 200 }, (_, i) => `page-${i}`);
    await h.post({ producer: "c", seq: 1, events: pages.map((page, i) => ({ page, ts: i, bytes: i })) });
    const primary = h.record.routes[0]?.primary ?? "";
    // The first checkpoint comes after a few entries; later ones once the log since is a quarter of the state.
    for (let i = 0; i < 10; i++) await h.tick();
    const first = h.cluster.host(primary).status();
    expect(first?.checkpointLsn).toBeGreaterThan(0);
    for (let i = 0; i < 300; i++) await h.tick();
    const later = h.cluster.host(primary).status();
    expect(later?.lsn).toBeGreaterThan((first?.lsn ?? 0) + 250);
    expect(later?.checkpointLsn).toBeGreaterThan(first?.lsn ?? 0);
    expect(h.cluster.storages.get(primary)?.log.size).toBeLessThan(300);
  });
});
