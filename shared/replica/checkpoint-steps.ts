/**
 * Taking a checkpoint (issue 12): whole in one step, or spread over many steps so that a
 * large state never stalls its object. A spread checkpoint as of LSN L captures the header
 * (LSN, output count, dedup state, the operator's head) at once and opens a copy-on-write
 * cursor over the operator's state (`StateSlicing.cursor`); each later step stages the
 * next slice (at most `KEYS_PER_SLICE` entries, one row) and the last one makes the
 * staged rows THE checkpoint, atomically with `checkpointLsn` and the log trim. Until
 * then the previous checkpoint stays the stored one: seeds offer it, the log is kept
 * behind it, and a restart (memory lost) simply leaves the staged rows to be dropped when
 * the next spread checkpoint begins. Operators without a cursor, states of one slice, and
 * a checkpoint asked for now (`checkpointNow`) take the one-step path.
 */
import { checkpointHeader, checkpointPieces, KEYS_PER_SLICE } from "../checkpoint/checkpoint-pieces.ts";
import type { ReplicaEffects, ReplicaState, ReplicaTuning } from "./replica-state.ts";
import { retireSegments } from "../keygroups/group-dedup.ts";

/**
 * Before a checkpoint, drops dedup memory inherited with moved key groups that now judges
 * as the own memory does (`group-dedup.ts`). Verdicts do not change, so the two replicas
 * need not do it at the same LSN.
 */
function retireMemories(state: ReplicaState, tuning: ReplicaTuning): void {
  if (state.moves.inherited.length > 0) state.moves.inherited = retireSegments(state.dedup, state.moves.inherited, tuning.dedupWindow);
}

/** Starts a checkpoint as of the applied LSN: spread when the operator can and the state has more than one slice, whole otherwise. */
export function startCheckpoint(state: ReplicaState, effects: ReplicaEffects, tuning: ReplicaTuning): void {
  const meta = state.meta;
  const perSlice = tuning.checkpointSliceKeys ?? KEYS_PER_SLICE;
  cancelSpread(state);
  // Staged rows are told apart from the stored checkpoint's by a higher LSN.
  const cursor = meta.appliedLsn > meta.checkpointLsn ? state.operator.cursor(perSlice) : null;
  if (!cursor || cursor.slices <= 1) {
    cursor?.close();
    takeCheckpoint(state, effects, tuning);
    return;
  }
  const { appliedLsn: lsn, outputSeq } = meta;
  retireMemories(state, tuning);
  const header = checkpointHeader({ lsn, outputSeq, dedup: state.dedup, sources: state.sources, moves: state.moves }, cursor.head, true, cursor.slices);
  state.spread = { lsn, outputSeq, cursor, written: 0, chars: header.length };
  effects.checkpointStage = { lsn, begin: true, pieces: [header], complete: false };
  state.charsSinceCheckpoint = 0;
  state.sinceCheckpoint = 0;
  continueCheckpoint(state, effects);
}

/**
 * Stages the next slice of a spread checkpoint, if one is being written; with the last,
 * makes it the stored checkpoint and trims the log behind it. A seeding hold (the stored
 * checkpoint is being copied) or an operator that swapped its state drops it instead.
 */
export function continueCheckpoint(state: ReplicaState, effects: ReplicaEffects): void {
  const spread = state.spread;
  if (!spread) return;
  if (spread.cursor.aborted || state.meta.holdLogAfterLsn !== null) {
    cancelSpread(state);
    return;
  }
  const stage = (effects.checkpointStage ??= { lsn: spread.lsn, begin: false, pieces: [], complete: false });
  const slice = spread.cursor.next();
  if (slice !== null) {
    stage.pieces.push(slice);
    spread.written += 1;
    spread.chars += slice.length;
  }
  if (slice !== null && spread.written < spread.cursor.slices) return;
  spread.cursor.close();
  state.spread = null;
  stage.complete = true;
  const meta = state.meta;
  meta.checkpointLsn = spread.lsn;
  meta.checkpointOutputSeq = spread.outputSeq;
  state.lastCheckpointChars = spread.chars;
  effects.trimLogThrough = trimmableThrough(meta);
}

/** Snapshots the stable state into `effects` in one step (dropping any spread checkpoint) and trims the log behind it where allowed; returns `effects`. */
export function takeCheckpoint(state: ReplicaState, effects: ReplicaEffects, tuning: ReplicaTuning): ReplicaEffects {
  cancelSpread(state);
  const meta = state.meta;
  // Serialized now: the next step mutates the operator state in place.
  retireMemories(state, tuning);
  const pieces = checkpointPieces(meta.appliedLsn, meta.outputSeq, state.dedup, state.operator, tuning.checkpointSliceKeys ?? KEYS_PER_SLICE, state.sources, state.moves);
  effects.checkpoint = { lsn: meta.appliedLsn, pieces };
  state.lastCheckpointChars = pieces.reduce((n, piece) => n + piece.length, 0);
  state.charsSinceCheckpoint = 0;
  state.sinceCheckpoint = 0;
  meta.checkpointLsn = meta.appliedLsn;
  meta.checkpointOutputSeq = meta.outputSeq;
  effects.trimLogThrough = trimmableThrough(meta);
  return effects;
}

function cancelSpread(state: ReplicaState): void {
  state.spread?.cursor.close();
  state.spread = null;
}

/** The highest LSN the log may drop: behind the checkpoint, the standby's ack and any seeding hold. */
function trimmableThrough(meta: ReplicaState["meta"]): number {
  let through = meta.checkpointLsn;
  if (meta.role === "primary" && meta.hasStandby) through = Math.min(through, meta.standbyAckLsn);
  if (meta.holdLogAfterLsn !== null) through = Math.min(through, meta.holdLogAfterLsn);
  return through;
}
