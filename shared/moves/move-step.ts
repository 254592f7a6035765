/**
 * A primary logging a step of a key-group move (issue 28; the entries: `keygroups/move-entries.ts`).
 * The monitor sends each step until it is answered, so a step is idempotent: one already
 * applied is answered at once, one still pending waits for its entry, and only a new one is
 * logged. A step is answered once its entry is stable (applied, and held by the standby if
 * there is one): a release then names what it took, for the monitor to carry to the target.
 */
import { isMoveEntry, moveEntry, moveStepOf, type MoveStep } from "../keygroups/move-entries.ts";
import { heldReleases } from "../keygroups/move-admission.ts";
import type { InheritedDedup } from "../keygroups/group-dedup.ts";
import type { Refusal } from "../wire/replica-rpc.ts";
import type { ReplicaEffects, ReplicaState, ReplicaTuning } from "../replica/replica-state.ts";
import { appendEntry, checkEpoch, type StepResult } from "../replica/replica-steps.ts";
import { NOT_INITIALISED, type ReplicaHost } from "../replica/replica-host.ts";
import { compileDataflow } from "../operators/compile.ts";

/** What a primary does with a move step: wait until the entry at `waitLsn` is stable, or refuse it. */
type MoveStepVerdict = { waitLsn: number } | { refused: string };

/** What a stable release took: the groups' state and the dedup memory that judged them. */
export interface Released {
  taken: unknown;
  judges: InheritedDedup[];
}

/**
 * Primary: logs `step` unless it was logged already. A step that contradicts what is held
 * is refused with a reason (forget or return of a move that released nothing here, a
 * release of groups another move released and did not forget).
 */
function logMoveStep(state: ReplicaState, msg: { epoch: number; step: MoveStep }, tuning: ReplicaTuning): StepResult<MoveStepVerdict | Refusal> {
  const effects: ReplicaEffects = { log: [], outputs: [] };
  const refusal = checkEpoch(state, msg.epoch, "primary");
  if (refusal) return { reply: refusal, effects };
  const { step } = msg;
  const meta = state.meta;
  const id = `${step.kind}:${step.move}`;
  if (state.moves.done.includes(id)) return { reply: { waitLsn: meta.appliedLsn }, effects };
  const pending = state.pending.find((entry) => isMoveEntry(entry) && `${moveStepOf(entry).kind}:${entry.seq}` === id);
  if (pending) return { reply: { waitLsn: pending.lsn }, effects };
  const problem = contradiction(state, step);
  if (problem !== null) return { reply: { refused: problem }, effects };
  return { reply: { waitLsn: appendEntry(state, moveEntry(step), tuning, effects) }, effects };
}

/** What a release of move `move` took, once applied here (null: no such release held). */
function releasedBy(state: ReplicaState, move: number): Released | null {
  const released = state.moves.released.find((r) => r.move === move);
  return released ? { taken: released.taken, judges: released.judges } : null;
}

/**
 * Why `step` cannot be logged on top of what is logged here (null: it can). A step that
 * could not be applied must never reach the log: both replicas, and every restart, would
 * fail on it.
 */
function contradiction(state: ReplicaState, step: MoveStep): string | null {
  if ((step.kind === "release" || step.kind === "adopt") && !state.operator.movable) return `the operator of dataflow '${state.meta.dataflowId}' cannot move keys' state between partitions`;
  if (step.kind === "adopt") {
    try {
      // The shape of what is adopted, checked on an empty operator of the same dataflow.
      compileDataflow(state.meta.spec).bind().adopt(step.taken, () => undefined);
    } catch (err) {
      return `what move ${step.move} carries cannot be adopted: ${err instanceof Error ? err.message : String(err)}`;
    }
  }
  const held = heldReleases(state.moves, state.pending);
  if (step.kind === "forget" || step.kind === "return") return held.some((r) => r.move === step.move) ? null : `move ${step.move} released nothing here`;
  const busy = step.groups.filter((g) => held.some((r) => r.groups.includes(g)));
  if (busy.length === 0) return null;
  return `key groups ${busy.join(", ")} were released here by a move that is not over`;
}


/** What a monitor asks of a pair's primary: one step of a move, in the epoch it knows. */
export interface MoveStepRequest {
  epoch: number;
  step: MoveStep;
}

/** The answer: done and stable (a release names what it took), refused for a reason, or logged but not known stable. */
export type MoveStepReply = { status: "ok"; released: Released | null } | { status: "refused"; reason: string } | { status: "unconfirmed"; reason: string } | Refusal;

/** Primary: logs a move step (once) and answers when it is stable. */
export async function carryOutMoveStep(host: ReplicaHost, msg: MoveStepRequest, tuning: ReplicaTuning): Promise<MoveStepReply> {
  const verdict = host.step((state) => logMoveStep(state, msg, tuning));
  if ("refused" in verdict) return { status: "refused", reason: verdict.refused };
  if (!("waitLsn" in verdict)) return verdict;
  try {
    await host.waitStable(verdict.waitLsn);
  } catch (err) {
    // Logged, but the standby did not confirm it: the monitor sends the step again.
    return { status: "unconfirmed", reason: err instanceof Error ? err.message : String(err) };
  }
  const state = host.load();
  if (!state) return NOT_INITIALISED;
  return { status: "ok", released: msg.step.kind === "release" ? releasedBy(state, msg.step.move) : null };
}
