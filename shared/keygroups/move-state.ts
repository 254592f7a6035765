/**
 * What a replica holds of key-group moves (issue 28), as of its applied LSN, and how a
 * move step's log entry changes it (`move-entries.ts`). It is part of the replica's
 * checkpoint, so a restart, a promotion or a seeded standby holds the same.
 */
import { z } from "zod";
import type { DedupState } from "../wire/persisted.ts";
import type { Emit, LiveOperator } from "../operators/operator.ts";
import type { WindowResult } from "../wire/window-result.ts";
import { judgesOf, withoutGroups, type InheritedDedup } from "./group-dedup.ts";
import { keyGroupOf } from "./key-groups.ts";
import { JudgeSchema, type MoveStep } from "./move-entries.ts";

/** Move steps remembered as applied, so a repeated one is a no-op; a move's steps come within a few of each other. */
const STEPS_REMEMBERED = 64;

export const MoveStateSchema = z.object({
  /** The dataflow's key-group count, by which records are grouped (0: no move has touched this replica). */
  of: z.number().int().min(0),
  /** Dedup memory that came with groups moved in (`group-dedup.ts`). */
  inherited: z.array(JudgeSchema),
  /** Groups released by a move not forgotten yet: what was taken, and the memory that judged them. Their records are refused. */
  released: z.array(z.object({ move: z.number().int().min(1), groups: z.array(z.number().int().min(0)), taken: z.unknown(), judges: z.array(JudgeSchema) })),
  /** The latest move steps applied, `kind:move`. */
  done: z.array(z.string()),
});
export type MoveState = z.infer<typeof MoveStateSchema>;

/** A replica no move has touched. */
export function noMoves(): MoveState {
  return { of: 0, inherited: [], released: [], done: [] };
}

/** Whether a move has left anything to keep in a checkpoint. */
export function hasMoves(moves: MoveState): boolean {
  return moves.of !== 0;
}

/** What applying a move step touches: the replica's move state, operator and own dedup memory. */
interface MoveTarget {
  moves: MoveState;
  operator: LiveOperator;
  dedup: DedupState;
}

/**
 * Applies a move step (both replicas, in log order). A step already applied is skipped.
 * `closeLimit`: the most results the close after an adopt may emit (the rest stay due).
 * @throws Error for a step that contradicts the state (a bug: the monitor orders steps).
 */
export function applyMoveStep(target: MoveTarget, step: MoveStep, out: Emit<WindowResult>, closeLimit: number): void {
  const { moves } = target;
  const id = `${step.kind}:${step.move}`;
  if (moves.done.includes(id)) return;
  if (step.kind === "release" || step.kind === "adopt") {
    if (moves.of !== 0 && moves.of !== step.of) throw new Error(`move ${step.move}: ${step.of} key groups, but this replica has ${moves.of}`);
    moves.of = step.of;
  }
  if (step.kind === "release") {
    const groups = new Set(step.groups);
    const taken = target.operator.take((key) => groups.has(keyGroupOf(key, step.of)));
    const judges = judgesOf(target.dedup, moves.inherited, step.groups);
    moves.inherited = withoutGroups(moves.inherited, step.groups);
    moves.released.push({ move: step.move, groups: [...step.groups], taken, judges });
  } else if (step.kind === "adopt") {
    adopt(target, step.taken, step.judges, out, closeLimit);
  } else {
    const at = moves.released.findIndex((r) => r.move === step.move);
    const released = moves.released[at];
    if (!released) throw new Error(`move ${step.move}: nothing released to ${step.kind}`);
    moves.released.splice(at, 1);
    if (step.kind === "return") adopt(target, released.taken, released.judges, out, closeLimit);
  }
  moves.done = [...moves.done, id].slice(-STEPS_REMEMBERED);
}

/** Adds moved state and the memory that judged it; closes what the move made due, up to `closeLimit`. */
function adopt(target: MoveTarget, taken: unknown, judges: readonly InheritedDedup[], out: Emit<WindowResult>, closeLimit: number): void {
  target.operator.adopt(taken, out);
  target.operator.process([], out, closeLimit);
  // Not routed here yet (a return's groups were never routed away, but the first of their records marks them all the same).
  target.moves.inherited = [...target.moves.inherited, ...judges.map((j) => ({ groups: [...j.groups], dedup: j.dedup, routed: false }))];
}
