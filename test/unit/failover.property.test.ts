/**
 * Fail-over under continuous ingest (issue 3), in Node over the real shared code: a
 * retrying client posts while one replica crashes, hangs, slows down or loses its
 * storage, and the monitor ticks. Every batch is acknowledged exactly once, the standby
 * takes over (or the partition degrades), a fresh standby is seeded, the partition ends
 * healthy, and a replaced replica that returns is fenced.
 */
import { describe, expect, it } from "vitest";
import { ClusterHarness } from "../helpers/cluster-harness.ts";
import type { MemoryFault } from "../helpers/memory-cluster.ts";
import { rng } from "../helpers/rng.ts";

async function scenario(seed: number, kind: MemoryFault | "wipe", role: "primary" | "standby") {
  const r = rng(seed);
  const h = new ClusterHarness({}, 1 + r.int(4));
  const route = () => h.record.routes[0];
  const batches = Array.from({ length: 40 }, (_, i) => ({
    producer: "client",
    seq: i + 1,
    events: Array.from({ length: 1 + r.int(5) }, () => ({ page: `k${r.int(9)}`, ts: r.int(20_000), bytes: r.int(50) })),
  }));
  let faulted = "";
  let rejected = 0;
  for (const [i, b] of batches.entries()) {
    if (i === 8) h.cluster.inject((faulted = (role === "primary" ? route()?.primary : route()?.standby) ?? ""), kind);
    if (i === 30 && kind !== "wipe") h.cluster.inject(faulted, "heal");
    rejected += await h.post(b);
    if (r.chance(0.3)) await h.tick();
  }
  await h.settle();

  expect(h.record.routes.map((x) => x.status), `seed ${seed}`).toEqual(["healthy", "healthy"]);
  const kinds = h.record.events.map((e) => e.kind);
  expect(kinds, `seed ${seed}`).toContain(role === "primary" ? "takeover" : "degraded");
  expect(kinds, `seed ${seed}`).toContain("recovery-finished");
  expect(route()?.primary === faulted || route()?.standby === faulted, `seed ${seed}: ${faulted} was replaced`).toBe(false);
  await h.expectExactResults(`seed ${seed}`);

  // The replaced replica, back from its fault, accepts no write at any epoch it could know.
  if (kind !== "wipe") {
    const write = await h.cluster.host(faulted).write({ epoch: route()?.epoch ?? 1, batches: [{ producer: "z", seq: 1, records: "[]" }] });
    expect(write.status === "ok" && write.results[0]?.status === "applied", `seed ${seed}`).toBe(false);
  }
  return rejected;
}

describe("fail-over under continuous ingest", () => {
  for (const kind of ["crash", "hang", "slow", "wipe"] as const) {
    for (const role of ["primary", "standby"] as const) {
      it(`masks a ${kind} of the ${role}: nothing lost or doubled, standby replaced, healthy again`, async () => {
        let rejected = 0;
        for (let seed = 1; seed <= 15; seed++) rejected += await scenario(seed, kind, role);
        expect(rejected, "the fault was felt by the client at least once").toBeGreaterThan(0);
      });
    }
  }
});
