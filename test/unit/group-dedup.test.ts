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

/** A step: a batch (its records' groups) sent or resent, with the partitions whose part fails; a group moved; segments retired. */
type Step = { kind: "send"; groups: number[]; fail: boolean[] } | { kind: "resend"; pick: number; fail: boolean[] } | { kind: "move"; group: number } | { kind: "retire" };

const fail = fc.tuple(fc.boolean(), fc.boolean());
const step = fc.oneof(
  fc.record({ kind: fc.constant("send" as const), groups: fc.array(fc.integer({ min: 0, max: GROUPS - 1 }), { minLength: 1, maxLength: 5 }), fail }),
  fc.record({ kind: fc.constant("resend" as const), pick: fc.nat(), fail }),
  fc.record({ kind: fc.constant("move" as const), group: fc.integer({ min: 0, max: GROUPS - 1 }) }),
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
  const batches: number[][] = [];
  const applied = new Map<string, number>();
  const tooOld = new Set<number>();
  const deliver = (seq: number, failures: readonly boolean[]): void => {
    const groups = batches[seq - 1] as number[];
    for (const p of [0, 1]) {
      const part = groups.flatMap((g, index) => (owner[g] === p ? [{ g, index }] : []));
      if (part.length === 0 || failures[p]) continue;
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
      recordBatch(home, inherited, "p", seq, window);
    }
  };
  for (const s of plan) {
    if (s.kind === "send") {
      batches.push(s.groups);
      deliver(batches.length, s.fail);
    } else if (s.kind === "resend" && batches.length > 0) {
      deliver((s.pick % batches.length) + 1, s.fail);
    } else if (s.kind === "move") {
      const from = owner[s.group] as number;
      const source = partitions[from] as Partition;
      const target = partitions[1 - from] as Partition;
      // Through JSON, as the move carries it.
      const segments = JSON.parse(JSON.stringify(judgesOf(source.home, source.inherited, [s.group]))) as InheritedDedup[];
      source.inherited = withoutGroups(source.inherited, [s.group]);
      target.inherited = [...target.inherited, ...segments];
      owner[s.group] = 1 - from;
    } else if (s.kind === "retire") {
      for (const p of partitions) p.inherited = retireSegments(p.home, p.inherited, window);
    }
  }
  // Every batch resent once more, nothing failing.
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
    recordBatch(home, [], "p", 1, 1024);
    // Group 3's part of batch 1 failed at the partition it came from: its memory has no batch 1.
    const inherited = [{ groups: [3], dedup: {} }];
    const judged = judgeBatch(home, inherited, "p", 1, 1024);
    expect("perGroup" in judged && [judged.perGroup(3), judged.perGroup(0)]).toEqual(["new", "duplicate"]);
    expect(judgeBatch(home, [], "p", 1, 1024)).toEqual({ whole: "duplicate" });
  });

  it("retires a segment once it judges as the own memory does, and merges twins", () => {
    const home: DedupState = {};
    const inherited: InheritedDedup[] = [
      { groups: [5], dedup: {} },
      { groups: [2], dedup: {} },
    ];
    recordBatch(home, [], "p", 1, 2);
    recordBatch(home, inherited, "p", 2, 2);
    // Both segments lack batch 1, which the own memory still judges: they stay, merged.
    expect(retireSegments(home, inherited, 2)).toEqual([{ groups: [2, 5], dedup: { $p: { high: 2, applied: [2], floor: 0 } } }]);
    recordBatch(home, inherited, "p", 3, 2);
    // Batch 1 is too old everywhere now.
    expect(retireSegments(home, inherited, 2)).toEqual([]);
  });
});
