/**
 * Issue 3 in workerd: for each fault kind, against the primary and against the standby,
 * a retrying client keeps posting. Results equal the reference (nothing lost or doubled),
 * the takeover (or degrade) happens, a fresh standby is seeded and caught up, the
 * partition ends healthy, and the replaced replica is fenced when it returns.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { partitionFor } from "../../shared/partitioner.ts";
import { call, createDataflow } from "../helpers/api.ts";
import { expectExact, fault, faultSpec, postUntilAcked, routing, tickUntilHealthy, tickUntilRetired, type Event } from "../helpers/fault-client.ts";

const PAGES = ["a", "b", "c", "d", "e", "f", "g", "h"];

function batchEvents(seq: number): Event[] {
  return PAGES.map((page, i) => ({ page, ts: seq * 1_000 + i, bytes: seq + i }));
}

describe.each(["crash", "hang", "slow", "wipe"])("a %s", (kind) => {
  it.each(["primary", "standby"] as const)("of the %s is masked: exact results, replaced, healthy again", async (role) => {
    const { id, stream } = await createDataflow(faultSpec);
    const victim = (await routing(id))[0]?.[role] ?? "";
    const acked: Event[][] = [];
    const statuses: number[] = [];
    for (let seq = 1; seq <= 16; seq++) {
      if (seq === 4) expect((await fault(victim, kind)).status).toBe(200);
      if (seq === 12 && kind !== "wipe") expect((await fault(victim, "heal")).status).toBe(200);
      statuses.push(...(await postUntilAcked(stream, "client", seq, batchEvents(seq), 0)));
      acked.push(batchEvents(seq));
    }
    await tickUntilHealthy(id);

    const route = (await routing(id))[0];
    expect([route?.primary, route?.standby]).not.toContain(victim);
    const status = (await (await call("GET", "/v1/status")).json()) as { dataflows: { id: string; events: { kind: string; partition: number }[] }[] };
    const kinds = status.dataflows.find((d) => d.id === id)?.events.filter((e) => e.partition === 0).map((e) => e.kind);
    expect(kinds).toContain(role === "primary" ? "takeover" : "degraded");
    expect(kinds).toContain("recovery-finished");
    expect(statuses.filter((s) => s !== 200).length, "the client saw the fault").toBeGreaterThan(0);
    await expectExact(id, stream, acked);

    if (kind !== "wipe") {
      await tickUntilRetired(victim);
      const zombie = env.PARTITION_REPLICA.getByName(victim);
      const write = await zombie.write({ epoch: route?.epoch ?? 0, batches: [{ producer: "z", seq: 1, records: "[]" }] });
      expect(write.status === "ok" && write.results[0]?.status === "applied").toBe(false);
    }
  });
});

describe("partition isolation", () => {
  it("keys on the other partition are never refused while one replica is down", async () => {
    const { id, stream } = await createDataflow(faultSpec);
    const victim = (await routing(id))[0]?.primary ?? "";
    expect((await fault(victim, "crash")).status).toBe(200);
    const otherPages = PAGES.filter((p) => partitionFor(p, 2) === 1);
    for (let seq = 1; seq <= 5; seq++) {
      const events = otherPages.map((page) => ({ page, ts: seq, bytes: 1 }));
      expect(await postUntilAcked(stream, "other", seq, events, 1, 1)).toEqual([200]);
    }
    await tickUntilHealthy(id);
  });
});
