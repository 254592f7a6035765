/**
 * Dedup across key-group moves (issue 28, `group-dedup.ts`): a producer's batches are split
 * over two partitions, parts fail, batches are resent, and groups move between the
 * partitions with the memory that judged them. No record is ever applied twice, and once
 * every batch is resent without failures every record has been applied once.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { judgeBatch, judgesOf, recordBatch, retireSegments, withoutGroups, type InheritedDedup } from "../../shared/keygroups/group-dedup.ts";
import type { DedupState } from "../../shared/wire/persisted.ts";

const GROUPS = 6;

interface Partition {
  home: DedupState;
  inherited: InheritedDedup[];
}

/**
 * A step: a batch (its records' groups) sent or resent, with the partitions whose part
 * fails; a group moved in (its source released it and refuses its records, the other
 * partition adopted it with its judge) but not routed there yet; routing switched for every
 * group moved in; segments retired.
 */
type Step =
  | { kind: "send"; groups: number[]; fail: boolean[] }
  | { kind: "resend"; pick: number; fail: boolean[] }
  | { kind: "move"; group: number }
  | { kind: "switch" }
  | { kind: "retire" };

const fail = fc.tuple(fc.boolean(), fc.boolean());
const step = fc.oneof(
  fc.record({ kind: fc.constant("send" as const), groups: fc.array(fc.integer({ min: 0, max: GROUPS - 1 }), { minLength: 1, maxLength: 5 }), fail }),
  fc.record({ kind: fc.constant("resend" as const), pick: fc.nat(), fail }),
  fc.record({ kind: fc.constant("move" as const), group: fc.integer({ min: 0, max: GROUPS - 1 }) }),
  fc.constant({ kind: "switch" as const }),
  fc.constant({ kind: "retire" as const }),
);

/**
 * Runs `plan` with dedup `window`, returning how often each record (`seq/index`) was
 * applied, and the records of batches refused as too old.
 */
function run(plan: readonly Step[], window: number): { applied: Map<string, number>; batches: number[][]; tooOld: Set<number> } {
  const partitions: Partition[] = [
    { home: {}, inherited: [] },
    { home: {}, inherited: [] },
  ];
  const owner = Array.from({ length: GROUPS }, (_, g) => g % 2);
  /** Groups adopted by the other partition, still routed to (and refused by) their source. */
  const moving = new Set<number>();
  const batches: number[][] = [];
  const applied = new Map<string, number>();
  const tooOld = new Set<number>();
  const deliver = (seq: number, failures: readonly boolean[]): void => {
    const groups = batches[seq - 1] as number[];
    for (const p of [0, 1]) {
      const part = groups.flatMap((g, index) => (owner[g] === p ? [{ g, index }] : []));
      // A part holding a group its partition released is refused whole (`move-admission.ts`).
      if (part.length === 0 || failures[p] || part.some(({ g }) => moving.has(g))) continue;
      const { home, inherited } = partitions[p] as Partition;
      const judged = judgeBatch(home, inherited, "p", seq, window);
      const verdictOf = (g: number) => ("whole" in judged ? judged.whole : judged.perGroup(g));
      if (part.some(({ g }) => verdictOf(g) === "too-old")) {
        tooOld.add(seq);
        continue;
      }
      const fresh = part.filter(({ g }) => verdictOf(g) === "new");
      if (fresh.length === 0) continue;
      for (const { index } of fresh) applied.set(`${seq}/${index}`, (applied.get(`${seq}/${index}`) ?? 0) + 1);
      recordBatch(home, inherited, "p", seq, window, () => new Set(fresh.map(({ g }) => g)));
    }
  };
  const switchAll = () => {
    for (const g of moving) owner[g] = 1 - (owner[g] as number);
    moving.clear();
  };
  for (const s of plan) {
    if (s.kind === "send") {
      batches.push(s.groups);
      deliver(batches.length, s.fail);
    } else if (s.kind === "resend" && batches.length > 0) {
      deliver((s.pick % batches.length) + 1, s.fail);
    } else if (s.kind === "move" && !moving.has(s.group)) {
      const from = owner[s.group] as number;
      const source = partitions[from] as Partition;
      const target = partitions[1 - from] as Partition;
      // Through JSON, as the move carries it.
      const segments = JSON.parse(JSON.stringify(judgesOf(source.home, source.inherited, [s.group]))) as InheritedDedup[];
      source.inherited = withoutGroups(source.inherited, [s.group]);
      target.inherited = [...target.inherited, ...segments];
      moving.add(s.group);
    } else if (s.kind === "switch") {
      switchAll();
    } else if (s.kind === "retire") {
      for (const p of partitions) p.inherited = retireSegments(p.home, p.inherited, window);
    }
  }
  // Every move switches, then every batch is resent once more, nothing failing.
  switchAll();
  for (let seq = 1; seq <= batches.length; seq++) deliver(seq, [false, false]);
  return { applied, batches, tooOld };
}

describe("dedup across key-group moves", () => {
  it("applies every record of a resent batch once, whichever groups moved meanwhile", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (plan) => {
        const { applied, batches } = run(plan, 1024);
        batches.forEach((groups, i) => groups.forEach((_, index) => expect(applied.get(`${i + 1}/${index}`), `record ${i + 1}/${index}`).toBe(1)));
      }),
      { numRuns: 2000 },
    );
  });

  it("with a small window, never applies a record twice: what it cannot judge it refuses", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (plan) => {
        const { applied, batches, tooOld } = run(plan, 3);
        for (const count of applied.values()) expect(count).toBe(1);
        batches.forEach((groups, i) => {
          if (!tooOld.has(i + 1)) groups.forEach((_, index) => expect(applied.get(`${i + 1}/${index}`)).toBe(1));
        });
      }),
      { numRuns: 2000 },
    );
  });

  it("the motivating case: a group whose part failed moves in, and its resent records are applied", () => {
    const home: DedupState = {};
    recordBatch(home, [], "p", 1, 1024, () => new Set([0]));
    // Group 3's part of batch 1 failed at the partition it came from: its memory has no batch 1.
    const inherited = [{ groups: [3], dedup: {}, routed: true }];
    const judged = judgeBatch(home, inherited, "p", 1, 1024);
    expect("perGroup" in judged && [judged.perGroup(3), judged.perGroup(0)]).toEqual(["new", "duplicate"]);
    expect(judgeBatch(home, [], "p", 1, 1024)).toEqual({ whole: "duplicate" });
  });

  it("a batch applied between a group's adopt and the switch is not recorded for it: its records, resent after the switch, are applied", () => {
    const home: DedupState = {};
    // Group 3 was adopted; its records still go to the source, which refuses them.
    const inherited: InheritedDedup[] = [{ groups: [3], dedup: {}, routed: false }];
    // Batch 1's part here holds only group 0.
    recordBatch(home, inherited, "p", 1, 1024, () => new Set([0]));
    expect(inherited).toEqual([{ groups: [3], dedup: {}, routed: false }]);
    // Not retired though it judges as the own memory does... for no batch yet: it stays until routed.
    expect(retireSegments({}, inherited, 1024)).toEqual(inherited);
    // After the switch, batch 1 is resent with group 3's records: they are new, group 0's are not.
    const judged = judgeBatch(home, inherited, "p", 1, 1024);
    expect("perGroup" in judged && [judged.perGroup(3), judged.perGroup(0)]).toEqual(["new", "duplicate"]);
    recordBatch(home, inherited, "p", 1, 1024, () => new Set([3]));
    expect(inherited[0]?.routed).toBe(true);
    expect(judgeBatch(home, inherited, "p", 1, 1024)).toEqual({ whole: "duplicate" });
  });

  it("a routed segment records every batch, so it retires once its producers sent a window's worth more", () => {
    const home: DedupState = {};
    const inherited: InheritedDedup[] = [{ groups: [3], dedup: { $p: { high: 9, applied: [9], floor: 0 } }, routed: false }];
    // Its first records (group 3) route it here.
    recordBatch(home, inherited, "p", 10, 4, () => new Set([3]));
    expect(inherited[0]?.routed).toBe(true);
    // Batches holding only other groups are recorded by it too from now on.
    for (let seq = 11; seq <= 20; seq++) recordBatch(home, inherited, "p", seq, 4, () => new Set([0]));
    expect(retireSegments(home, inherited, 4)).toEqual([]);
  });

  it("retires a routed segment once it judges as the own memory does, and merges routed twins", () => {
    const home: DedupState = {};
    const inherited: InheritedDedup[] = [
      { groups: [5], dedup: {}, routed: true },
      { groups: [2], dedup: {}, routed: true },
    ];
    const all = () => new Set([2, 5]);
    recordBatch(home, [], "p", 1, 2, all);
    recordBatch(home, inherited, "p", 2, 2, all);
    // Both segments lack batch 1, which the own memory still judges: they stay, merged.
    expect(retireSegments(home, inherited, 2)).toEqual([{ groups: [2, 5], dedup: { $p: { high: 2, applied: [2], floor: 0 } }, routed: true }]);
    recordBatch(home, inherited, "p", 3, 2, all);
    // Batch 1 is too old everywhere now.
    expect(retireSegments(home, inherited, 2)).toEqual([]);
  });
});
