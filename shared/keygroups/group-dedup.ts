/**
 * Dedup across key-group moves (issue 28). A replica judges `(producer, seq)` once per
 * batch (`dedup.ts`), which is exact while a partition's groups never change: every batch
 * it applied held its part for all of them. A group that moves in breaks that. Take a
 * batch split over partitions A and C: A applies its part, C fails before applying its
 * part, whose records are of group g. Then g moves from C to A and the producer resends:
 * A's memory says the batch was applied, yet g's records never were; dropping the resend
 * would lose them. The reverse holds for a batch C applied and A did not.
 *
 * So a group that moves in keeps being judged by the memory that judged it where it came
 * from (a segment inherited with it), and the replica's own memory judges the groups it
 * always held. A batch is whole when every judge agrees (the usual case, one lookup each);
 * otherwise its records are kept per group, by that group's judge.
 *
 * A segment arrives (adopt) before routing sends its groups here (switch): a batch applied
 * in between holds none of their records, which are still on their way to the source (it
 * refuses them; the producer resends them here after the switch). Had the segment
 * recorded that batch, it would drop them as duplicates. So until records of its groups
 * were applied here, a segment records only batches holding some (none can, before the
 * switch). Once they were, routing has switched and this replica knows the new epoch, so
 * it refuses writes split by the old owners: every batch's records of its groups arrive
 * with the rest of its part here, and the segment records every batch again (`routed`),
 * as the own memory always does (its groups were always routed here).
 *
 * A routed segment whose memory has become the own memory's (its producers sent `window`
 * more batches since) is retired; its groups are then judged by the own memory again.
 */
import { judgeSeq, recordSeq, type DedupVerdict } from "../dedup.ts";
import type { DedupState } from "../wire/persisted.ts";

/** Dedup memory that came with key groups moved in: it judges their records. */
export interface InheritedDedup {
  /** The key groups it judges, ascending. */
  groups: number[];
  dedup: DedupState;
  /** Records of its groups were applied here since it came: routing sends them here, and it may be retired. */
  routed: boolean;
}

/** How a batch is judged: whole, or per key group (a `keep` test on each record's group). */
export type BatchJudgement = { whole: DedupVerdict } | { perGroup: (group: number) => DedupVerdict };

/** Judges `(producer, seq)` by the own memory `home` and by each inherited segment. */
export function judgeBatch(home: DedupState, inherited: readonly InheritedDedup[], producer: string, seq: number, window: number): BatchJudgement {
  const own = judgeSeq(home, producer, seq, window);
  if (inherited.length === 0) return { whole: own };
  const verdicts = inherited.map((segment) => judgeSeq(segment.dedup, producer, seq, window));
  if (verdicts.every((v) => v === own)) return { whole: own };
  const byGroup = new Map<number, DedupVerdict>();
  inherited.forEach((segment, i) => segment.groups.forEach((g) => byGroup.set(g, verdicts[i] as DedupVerdict)));
  return { perGroup: (group) => byGroup.get(group) ?? own };
}

/**
 * Records an applied batch in the own memory and in each routed segment; a segment not
 * routed yet records it only when some of `groupsOf()` (the groups of the records applied,
 * computed only then) are its own, and is routed from then on.
 */
export function recordBatch(home: DedupState, inherited: InheritedDedup[], producer: string, seq: number, window: number, groupsOf: () => ReadonlySet<number>): void {
  recordSeq(home, producer, seq, window);
  let groups: ReadonlySet<number> | null = null;
  for (const segment of inherited) {
    if (!segment.routed) {
      groups ??= groupsOf();
      const applied = groups;
      if (!segment.groups.some((g) => applied.has(g))) continue;
      segment.routed = true;
    }
    recordSeq(segment.dedup, producer, seq, window);
  }
}

/**
 * The memory that judges `groups` here, as segments to hand over with them (a group held
 * from the start is judged by a copy of the own memory). Each group appears in one segment.
 */
export function judgesOf(home: DedupState, inherited: readonly InheritedDedup[], groups: readonly number[]): InheritedDedup[] {
  const bySegment = new Map<DedupState, number[]>();
  for (const group of [...groups].sort((a, b) => a - b)) {
    const judge = inherited.find((segment) => segment.groups.includes(group))?.dedup ?? home;
    const list = bySegment.get(judge);
    if (list) list.push(group);
    else bySegment.set(judge, [group]);
  }
  return [...bySegment].map(([dedup, owned]) => ({ groups: owned, dedup: copyDedup(dedup), routed: false }));
}

/** A deep copy of a dedup memory. */
function copyDedup(dedup: DedupState): DedupState {
  return Object.fromEntries(Object.entries(dedup).map(([slot, entry]) => [slot, { ...entry, applied: [...entry.applied] }]));
}

/** The segments left once `groups` moved away (a segment with no group left goes). */
export function withoutGroups(inherited: readonly InheritedDedup[], groups: readonly number[]): InheritedDedup[] {
  const gone = new Set(groups);
  return inherited.map((segment) => ({ ...segment, groups: segment.groups.filter((g) => !gone.has(g)) })).filter((segment) => segment.groups.length > 0);
}

/**
 * The segments to keep: a routed one that judges every seq as the own memory does is
 * retired, and routed segments that judge alike are merged. One not routed yet stays as it
 * is: it must not start recording batches that hold none of its groups' records.
 * Deterministic, so both replicas keep the same.
 */
export function retireSegments(home: DedupState, inherited: readonly InheritedDedup[], window: number): InheritedDedup[] {
  const kept: InheritedDedup[] = [];
  for (const segment of inherited) {
    if (!segment.routed) {
      kept.push({ ...segment, groups: [...segment.groups] });
      continue;
    }
    if (sameMemory(segment.dedup, home, window)) continue;
    const twin = kept.find((k) => k.routed && sameMemory(k.dedup, segment.dedup, window));
    if (twin) twin.groups = [...twin.groups, ...segment.groups].sort((a, b) => a - b);
    else kept.push({ groups: [...segment.groups], dedup: segment.dedup, routed: true });
  }
  return kept;
}

/** Whether two memories give the same verdict for every `(producer, seq)`. */
function sameMemory(a: DedupState, b: DedupState, window: number): boolean {
  const slots = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const slot of slots) {
    const x = a[slot];
    const y = b[slot];
    if (!x || !y) return false;
    const floor = Math.max(x.high - window, x.floor);
    if (x.high !== y.high || floor !== Math.max(y.high - window, y.floor)) return false;
    // Seqs at or below the floor are too old for both: what either still lists there does not count.
    const xs = x.applied.filter((seq) => seq > floor);
    const ys = y.applied.filter((seq) => seq > floor);
    if (xs.length !== ys.length || xs.some((seq, i) => seq !== ys[i])) return false;
  }
  return true;
}
