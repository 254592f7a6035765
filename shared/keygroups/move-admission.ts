/**
 * How a primary takes batches while key groups move (issue 28): a write holding records
 * of a group it released (or is releasing: the entry is logged, not yet applied) waits
 * until routing sends that group elsewhere; a batch is judged per group when groups that
 * moved in are judged by other memories than its own (`group-dedup.ts`), and only its
 * records not applied before are logged.
 */
import { judgeSeq, type DedupVerdict } from "../dedup.ts";
import type { DedupState, LogEntry } from "../wire/persisted.ts";
import type { FluxRecord } from "../wire/window-result.ts";
import { judgeBatch } from "./group-dedup.ts";
import { keyGroupOf } from "./key-groups.ts";
import { isMoveEntry, moveStepOf } from "./move-entries.ts";
import type { MoveState } from "./move-state.ts";

/**
 * Why a write must wait: the groups of its records this replica released or is releasing
 * (null: none). Parses the records only while a release is in hand.
 */
export function movingAway(moves: MoveState, pending: readonly LogEntry[], batches: readonly { records: string }[]): string | null {
  const away = new Set(heldReleases(moves, pending).flatMap((r) => r.groups));
  if (away.size === 0) return null;
  const of = groupCount(moves, pending);
  const hit = new Set<number>();
  for (const batch of batches) {
    for (const record of JSON.parse(batch.records) as FluxRecord[]) {
      const group = keyGroupOf(record[0], of);
      if (away.has(group)) hit.add(group);
    }
  }
  if (hit.size === 0) return null;
  return `key group${hit.size === 1 ? "" : "s"} ${[...hit].sort((a, b) => a - b).join(", ")} ${hit.size === 1 ? "is" : "are"} moving to another partition`;
}

/**
 * The releases held once everything logged here is applied: the applied ones and the
 * pending ones, less those a pending forget or return ends.
 */
export function heldReleases(moves: MoveState, pending: readonly LogEntry[]): { move: number; groups: number[] }[] {
  let held = moves.released.map((r) => ({ move: r.move, groups: r.groups }));
  for (const entry of pending) {
    if (!isMoveEntry(entry)) continue;
    const step = moveStepOf(entry);
    if (step.kind === "release") held.push({ move: step.move, groups: step.groups });
    else if (step.kind === "forget" || step.kind === "return") held = held.filter((r) => r.move !== step.move);
  }
  return held;
}

/** The key-group count: the state's, or that of a release still pending on a replica no move has touched. */
function groupCount(moves: MoveState, pending: readonly LogEntry[]): number {
  if (moves.of !== 0) return moves.of;
  for (const entry of pending) {
    if (!isMoveEntry(entry)) continue;
    const step = moveStepOf(entry);
    if (step.kind === "release") return step.of;
  }
  throw new Error("a release is in hand, but no key-group count");
}

/**
 * The verdict on a batch and the records to log if it is new: all of them, unless groups
 * that moved in judge it otherwise than the own memory, when only the records their
 * judges find new are logged (none: a duplicate; one too old: too old, nothing logged).
 * Reserved producers (`$tick`, ...) are judged by the own memory alone.
 */
export function judgeIncoming(home: DedupState, moves: MoveState, batch: { producer: string; seq: number; records: string }, window: number): { verdict: DedupVerdict; records: string } {
  if (moves.inherited.length === 0 || batch.producer.startsWith("$")) return { verdict: judgeSeq(home, batch.producer, batch.seq, window), records: batch.records };
  const judged = judgeBatch(home, moves.inherited, batch.producer, batch.seq, window);
  if ("whole" in judged) return { verdict: judged.whole, records: batch.records };
  const records = JSON.parse(batch.records) as FluxRecord[];
  const verdicts = records.map((record) => judged.perGroup(keyGroupOf(record[0], moves.of)));
  if (verdicts.includes("too-old")) return { verdict: "too-old", records: batch.records };
  const fresh = records.filter((_, i) => verdicts[i] === "new");
  if (fresh.length === 0) return { verdict: "duplicate", records: batch.records };
  return { verdict: "new", records: fresh.length === records.length ? batch.records : JSON.stringify(fresh) };
}

/**
 * The records of a batch that entries still pending here with the same `(producer, seq)`
 * do not cover, as JSON (null: they cover all, so the batch waits for them). A record is
 * covered when its group's judge will record that entry once applied: the own memory
 * records every batch; a segment that came with moved groups only one holding records of
 * its groups (`group-dedup.ts`). So records of moved-in groups that reach this partition
 * after the switch are logged, though the batch's other part was logged before it.
 */
export function uncoveredByPending(moves: MoveState, records: string, pending: readonly LogEntry[]): string | null {
  if (moves.inherited.length === 0) return null;
  const logged = new Set(pending.flatMap((entry) => (JSON.parse(entry.records) as FluxRecord[]).map((record) => keyGroupOf(record[0], moves.of))));
  const covered = (group: number): boolean => {
    const segment = moves.inherited.find((s) => s.groups.includes(group));
    return !segment || segment.groups.some((g) => logged.has(g));
  };
  const parsed = JSON.parse(records) as FluxRecord[];
  const left = parsed.filter((record) => !covered(keyGroupOf(record[0], moves.of)));
  return left.length === 0 ? null : JSON.stringify(left);
}
