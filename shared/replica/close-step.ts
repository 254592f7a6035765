/**
 * The primary's step that keeps a spread close going (issue 12): when a close is held
 * back and no logged entry is waiting to be applied (each applied entry closes the next
 * results), it logs a close entry like any batch — forwarded to the standby, applied once
 * stable — so both replicas close the same results at the same LSN.
 */
import { closeEntryAt } from "../closing/close-entry.ts";
import type { ReplicaEffects, ReplicaState, ReplicaTuning } from "./replica-state.ts";
import { appendEntry, type StepResult } from "./replica-steps.ts";

/** Whether `state` is a primary whose operator has results due that a close limit held back. */
export function isClosingPrimary(state: ReplicaState): boolean {
  return state.meta.role === "primary" && state.operator.closing();
}

/**
 * Primary: logs a close entry if a close is held back and nothing logged is pending (without
 * a standby it is stable, and applied, at once). Replies with the LSN to wait for: once it
 * is stable, the close has gone on by at least one entry.
 */
export function logCloseEntry(state: ReplicaState, tuning: ReplicaTuning): StepResult<number> {
  const effects: ReplicaEffects = { log: [], outputs: [] };
  const meta = state.meta;
  if (!isClosingPrimary(state) || state.pending.length > 0) return { reply: meta.lsn, effects };
  return { reply: appendEntry(state, closeEntryAt(meta.lsn + 1), tuning, effects), effects };
}
