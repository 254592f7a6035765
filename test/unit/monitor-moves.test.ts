/**
 * The monitor's tick carries out the key-group moves in its record (issue 28,
 * `shared/moves/advance-moves.ts`): a move finishes within one tick when both pairs
 * answer, both partitions' replicas learn their new epoch in that same tick, the status
 * events name the groups and how long their records waited, and results stay exact while
 * posts go on before and after.
 */
import { describe, expect, it } from "vitest";
import { keyGroupMapOf, keyGroupOf, partitionOfKey } from "../../shared/keygroups/key-groups.ts";
import { ClusterHarness, type Batch } from "../helpers/cluster-harness.ts";

const batch = (seq: number, pages: readonly string[]): Batch => ({ producer: "p", seq, events: pages.map((page, i) => ({ page, ts: 100 + i, bytes: 10 + i })) });

describe("key-group moves in the monitor's tick", () => {
  it("moves a group in one tick, tells both pairs their new epoch, notes the move, and keeps results exact", async () => {
    const h = new ClusterHarness({ partitions: 2 });
    const pages = ["a", "b", "c", "d", "e", "f"];
    await h.post(batch(1, pages));
    await h.post(batch(2, pages));
    const map = keyGroupMapOf(h.record);
    const from = partitionOfKey(map, "a");
    const to = 1 - from;
    const group = keyGroupOf("a", map.groups);
    const epochs = h.record.routes.map((r) => r.epoch);
    h.record.moves.push({ id: h.record.nextMove, groups: [group], from, to, phase: "release", startedAtMs: h.nowMs, releasedAtMs: null, switchedAtMs: null, failure: null });
    h.record.nextMove += 1;
    await h.tick();
    expect(h.record.moves).toEqual([]);
    expect(partitionOfKey(keyGroupMapOf(h.record), "a")).toBe(to);
    expect(h.record.routes.map((r) => r.epoch)).toEqual(epochs.map((e) => e + 1));
    // Both replicas of both partitions were configured at the new epoch in the same tick.
    for (const route of h.record.routes) {
      for (const name of [route.primary, route.standby]) expect(h.cluster.host(name ?? "").status()?.epoch, name ?? "").toBe(route.epoch);
    }
    const event = h.record.events.at(-1);
    expect(event).toMatchObject({ kind: "move-finished", partition: from });
    expect(event?.detail).toBe(`move 1: key group ${group} moved from partition ${from} to ${to}; their records waited 0 ms`);
    await h.post(batch(3, pages));
    // A resend of a batch the source applied before the move is not counted again.
    await h.post(batch(2, pages));
    await h.expectExactResults("after a move");
  });
});
