/**
 * The steps of a key-group move as log entries (issue 28). A move of groups from pair A
 * to pair B is carried out as entries in the logs of the pairs it touches, so both
 * replicas of a pair apply it at the same LSN, replay it after a restart and seed a fresh
 * standby with it, like any batch:
 * - `release` (A): takes the groups' state out of the operator and keeps it, with the
 *   dedup memory that judged them, until `forget`; A refuses their records from then on.
 * - `adopt` (B): adds what A released, and judges the groups' records by its memory.
 * - `forget` (A): drops the released state once B holds it on both replicas and routing
 *   sends the groups to B.
 * - `return` (A): a move given up before routing changed; A takes its released state back.
 * Each entry names its move; a step applied once is not applied again (`move-state.ts`).
 * The entry's producer is reserved (`$move`; client producer ids cannot hold `$`), its seq
 * is the move's number, and dedup never judges it.
 */
import { z } from "zod";
import { DedupStateSchema, type LogEntry } from "../wire/persisted.ts";

const MOVE_PRODUCER = "$move";

const Groups = z.array(z.number().int().min(0)).min(1);
/** A segment of dedup memory that judges some key groups (`group-dedup.ts`), as moves carry and replicas keep it. */
export const JudgeSchema = z.object({ groups: Groups, dedup: DedupStateSchema, routed: z.boolean().default(false) });

const MoveStepSchema = z.discriminatedUnion("kind", [
  /** `of`: the dataflow's key-group count, by which records are grouped. */
  z.object({ kind: z.literal("release"), move: z.number().int().min(1), of: z.number().int().min(1), groups: Groups }),
  z.object({ kind: z.literal("adopt"), move: z.number().int().min(1), of: z.number().int().min(1), groups: Groups, taken: z.unknown(), judges: z.array(JudgeSchema) }),
  z.object({ kind: z.literal("forget"), move: z.number().int().min(1) }),
  z.object({ kind: z.literal("return"), move: z.number().int().min(1) }),
]);
/** One step of a move, as its log entry holds it. */
export type MoveStep = z.infer<typeof MoveStepSchema>;

/** Whether a log entry holds a move step. */
export function isMoveEntry(entry: Pick<LogEntry, "producer">): boolean {
  return entry.producer === MOVE_PRODUCER;
}

/** The log entry (without its LSN) of a move step. */
export function moveEntry(step: MoveStep): Omit<LogEntry, "lsn"> {
  return { producer: MOVE_PRODUCER, seq: step.move, records: JSON.stringify(step) };
}

/** The move step a log entry holds. @throws Error when it is not a well-formed move entry. */
export function moveStepOf(entry: LogEntry): MoveStep {
  const parsed = MoveStepSchema.safeParse(JSON.parse(entry.records));
  if (!isMoveEntry(entry) || !parsed.success || parsed.data.move !== entry.seq) throw new Error(`log entry ${entry.lsn}: not a move step`);
  return parsed.data;
}
