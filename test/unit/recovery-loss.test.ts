/**
 * A protocol bug the stronger simulator found (issue 10, seeds 100 and 132): a fresh
 * replica that lost its storage after its seed was installed answered probes empty, which
 * the monitor took as "not seeded yet" forever; the recovery never moved and, once the
 * replica was attached as standby, every write to the partition was refused.
 */
import { describe, expect, it } from "vitest";
import { ClusterHarness, type Batch } from "../helpers/cluster-harness.ts";

const batch = (seq: number): Batch => ({ producer: "c", seq, events: [{ page: `key${seq}`, ts: seq * 100, bytes: seq }] });

describe("a fresh replica that loses its state after being seeded", () => {
  it("is replaced when it is lost once attached as standby", async () => {
    const h = new ClusterHarness({}, 2);
    for (let seq = 1; seq <= 10; seq++) await h.post(batch(seq));
    const route = () => h.record.routes[0];
    h.cluster.inject(route()?.standby ?? "", "crash");
    for (let tick = 0; tick < 40 && route()?.recovery?.phase !== "attached"; tick++) await h.tick();
    const fresh = route()?.recovery?.replica ?? "";
    expect(route()?.recovery?.phase).toBe("attached");
    expect(route()?.standby).toBe(fresh);
    h.cluster.inject(fresh, "wipe");
    for (let seq = 11; seq <= 13; seq++) await h.post(batch(seq));
    await h.settle();
    expect(route()?.standby).not.toBe(fresh);
    expect(h.record.events.map((e) => e.kind)).toContain("recovery-finished");
    await h.expectExactResults("after losing the attached fresh replica");
  });
});
