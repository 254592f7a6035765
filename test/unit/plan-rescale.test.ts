/**
 * Planning a rescale (issue 28, `shared/moves/plan-rescale.ts`): growing a dataflow adds
 * routes for the new partitions and queues moves of at most four groups each that leave
 * every partition an even share; what cannot be done is refused with a reason, and the
 * record is then left as it was.
 */
import { describe, expect, it } from "vitest";
import { groupsPerPartition, keyGroupMapOf } from "../../shared/keygroups/key-groups.ts";
import { GROUPS_PER_MOVE, planGrowth, planRebalance } from "../../shared/moves/plan-rescale.ts";
import type { DataflowRecord } from "../../shared/wire/routing.ts";
import { record as storedRecord, spec } from "../helpers/fixtures.ts";

/** The owners after every planned move ran. */
function ownersAfter(record: DataflowRecord): number[] {
  const map = keyGroupMapOf(record);
  const owners = Array.from({ length: map.groups }, (_, g) => (map.owners ? (map.owners[g] ?? -1) : g % map.partitions));
  for (const move of record.moves) {
    for (const g of move.groups) {
      expect(owners[g], `move ${move.id} takes group ${g} from its owner`).toBe(move.from);
      owners[g] = move.to;
    }
  }
  return owners;
}

describe("planning growth", () => {
  for (const [before, after] of [[1, 2], [2, 4], [3, 5], [4, 8], [2, 64], [1, 3]] as const) {
    it(`${before} → ${after} partitions: new routes, even shares, small moves into the new partitions only`, () => {
      const record = storedRecord("df", spec({ partitions: before }));
      const planned = planGrowth(record, after, 1_000);
      if ("refused" in planned) throw new Error(planned.refused);
      expect(planned.routes.map((r) => r.partition)).toEqual(Array.from({ length: after - before }, (_, i) => before + i));
      expect(record.routes).toHaveLength(after);
      expect(record.spec.partitions).toBe(after);
      expect(record.routes.slice(before).every((r) => r.epoch === record.routes[0]?.epoch && r.primary === `df/p${r.partition}/g0`)).toBe(true);
      // The table is written out unchanged: nothing moved yet.
      expect(groupsPerPartition(keyGroupMapOf(record)).slice(before).every((n) => n === 0)).toBe(true);
      const owners = ownersAfter(record);
      const counts = Array.from({ length: after }, (_, p) => owners.filter((o) => o === p).length);
      expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
      expect(record.moves.every((m) => m.groups.length >= 1 && m.groups.length <= GROUPS_PER_MOVE && m.to >= before && m.from < before)).toBe(true);
      expect(record.moves.map((m) => m.id)).toEqual(record.moves.map((_, i) => i + 1));
      expect(record.moves.every((m) => m.phase === "release" && m.startedAtMs === 1_000)).toBe(true);
    });
  }

  it("refuses, leaving the record as it was: lower, past the key-group count, a stage, one read by stages, moves under way", () => {
    const cases: [DataflowRecord, number, string, RegExp][] = [];
    const base = () => storedRecord("df", spec({ partitions: 4 }));
    cases.push([base(), 3, "SPEC_CONFLICT", /^dataflow 'df' has 4 partitions: lowering the count is not built yet/]);
    const old = { ...base(), keyGroups: null };
    cases.push([old, 65, "SPEC_CONFLICT", /^dataflow 'df' has 64 key groups, so at most 64 partitions$/]);
    cases.push([{ ...base(), readers: ["sums"] }, 8, "SPEC_CONFLICT", /while stages read it \(sums\)/]);
    const stage = storedRecord("st", spec({ partitions: 2, stream: undefined, from: "df", key: "key" }));
    cases.push([stage, 4, "SPEC_CONFLICT", /^dataflow 'st' cannot change its partition count while it is a stage/]);
    const busy = base();
    if ("refused" in planGrowth(busy, 8, 0)) throw new Error("growth refused");
    cases.push([busy, 16, "RESCALE_IN_PROGRESS", /is still moving key groups \(32 moves left\)/]);
    for (const [record, partitions, code, message] of cases) {
      const before = JSON.stringify(record);
      const planned = planGrowth(record, partitions, 0);
      expect("refused" in planned && planned.code).toBe(code);
      expect("refused" in planned && planned.refused).toMatch(message);
      expect(JSON.stringify(record)).toBe(before);
    }
  });

  it("rebalancing queues what a rescale whose moves were given up still owes, and nothing when even or while moves run", () => {
    const record = storedRecord("df", spec({ partitions: 2 }));
    expect(planRebalance(record, 0)).toBe(0);
    const planned = planGrowth(record, 4, 0);
    if ("refused" in planned) throw new Error(planned.refused);
    expect(planRebalance(record, 0)).toBe(0);
    // Half the moves finished (their owners written), the rest were given up.
    const owners = [...(record.keyGroups?.owners ?? [])];
    const done = record.moves.slice(0, record.moves.length / 2);
    for (const move of done) for (const g of move.groups) owners[g] = move.to;
    record.keyGroups = { groups: owners.length, owners };
    record.moves = [];
    const queued = planRebalance(record, 5);
    expect(queued).toBeGreaterThan(0);
    expect(record.moves).toHaveLength(queued);
    expect(record.moves[0]?.id).toBe(record.nextMove - queued);
    const after = ownersAfter(record);
    const counts = [0, 1, 2, 3].map((p) => after.filter((o) => o === p).length);
    expect(counts).toEqual([64, 64, 64, 64]);
  });
});
