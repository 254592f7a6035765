/**
 * The in-memory state of one partition replica and how it is rebuilt from storage.
 * Invariant: `operator` and `dedup` reflect exactly the log entries up to
 * `meta.appliedLsn`; `pending` holds the logged entries above it, in LSN order.
 */
import { recordSeq } from "../dedup.ts";
import { compileDataflow } from "../operators/compile.ts";
import type { Emit, LiveOperator } from "../operators/operator.ts";
import type { SliceCursor } from "../operators/state-slices.ts";
import type { DedupState, LogEntry, ReplicaMeta } from "../wire/persisted.ts";
import type { NumberedOutput, ReplicaStatus } from "../wire/replica-rpc.ts";
import { isFluxRecord, type FluxRecord, type WindowResult } from "../wire/window-result.ts";
import { tickTimeOf } from "./clock-ticks.ts";
import { CLOSE_KEYS_PER_STEP, isCloseEntry } from "../closing/close-entry.ts";
import type { RestoredCheckpoint } from "../checkpoint/checkpoint-pieces.ts";
import type { DownstreamProgress } from "../wire/exchange.ts";
import { deliveryOf, isDeliveryEntry } from "../exchange/delivery-entry.ts";
import { acceptDelivery, copyProgress, expectedSources } from "../exchange/accept-delivery.ts";
import { sourcesOf } from "../wire/dataflow-spec.ts";
import { applyMoveStep, noMoves, type MoveState } from "../keygroups/move-state.ts";
import { isMoveEntry, moveStepOf } from "../keygroups/move-entries.ts";
import { recordBatch } from "../keygroups/group-dedup.ts";
import { keyGroupOf } from "../keygroups/key-groups.ts";

/** Everything a replica holds in memory. */
export interface ReplicaState {
  meta: ReplicaMeta;
  /** The dataflow's operator bound to its state. */
  operator: LiveOperator;
  /** The longest window a result spans, ms (bounds range queries over stored outputs). */
  maxWindowMs: number;
  dedup: DedupState;
  /** A stage's progress per upstream partition (issue 27), as of `meta.appliedLsn`; empty for a dataflow fed by a stream. */
  sources: DownstreamProgress;
  /** What key-group moves left here (issue 28), as of `meta.appliedLsn`. */
  moves: MoveState;
  pending: LogEntry[];
  /** Batches applied since the last checkpoint. */
  sinceCheckpoint: number;
  /** Characters of records applied since the last checkpoint. */
  charsSinceCheckpoint: number;
  /** Size of the last checkpoint taken or restored, characters (0: none). */
  lastCheckpointChars: number;
  /** A checkpoint being written over several steps (memory only: a restart drops it). */
  spread: SpreadCheckpoint | null;
  /** Records applied since the state was loaded (memory only: the monitor's load measure). */
  recordsApplied: number;
}

/** A checkpoint being written over several steps (`checkpoint-steps.ts`). */
interface SpreadCheckpoint {
  lsn: number;
  outputSeq: number;
  cursor: SliceCursor & { readonly aborted: boolean };
  /** Slices staged so far. */
  written: number;
  /** Characters staged so far. */
  chars: number;
}

/** Storage writes a step asks for; the adapter performs them in one transaction with `meta`. */
export interface ReplicaEffects {
  log: LogEntry[];
  outputs: NumberedOutput[];
  /** A new checkpoint as of `lsn`: its pieces (header, then slices), see `shared/checkpoint/`. */
  checkpoint?: { lsn: number; pieces: string[] };
  /**
   * Part of a checkpoint as of `lsn` written over several steps (`checkpoint-steps.ts`):
   * `begin` drops rows staged by an earlier unfinished one, `pieces` are appended after
   * the staged rows, and `complete` makes the staged rows the checkpoint (deleting the
   * old one) in the same transaction as the meta that names `lsn` as `checkpointLsn`.
   */
  checkpointStage?: { lsn: number; begin: boolean; pieces: string[]; complete: boolean };
  /** Log entries with LSN ≤ this may be deleted. */
  trimLogThrough?: number;
  /** Records the operator dropped as too late, by LSN, for entries applied in this step (none: 0). */
  late?: Map<number, number>;
}

/** Tuning a replica needs from {@link FluxConfig}. */
export interface ReplicaTuning {
  dedupWindow: number;
  checkpointEvery: number;
  /** (window, key) entries per checkpoint slice (default `KEYS_PER_SLICE`; the simulator uses a few). */
  checkpointSliceKeys?: number;
  /** Log characters since the last checkpoint that make one due before `checkpointEvery` batches (default 4M; tests use less). */
  checkpointLogChars?: number;
  /** (window, key) results one log entry closes at most (default `CLOSE_KEYS_PER_STEP`; the simulator uses a few). Both replicas must agree on it. */
  closeKeysPerStep?: number;
}

/** A fresh replica state with no history, or one holding a restored checkpoint. */
export function emptyReplicaState(meta: ReplicaMeta, checkpoint?: RestoredCheckpoint): ReplicaState {
  const compiled = compileDataflow(meta.spec);
  const operator = checkpoint?.operator ?? compiled.bind();
  const dedup = checkpoint?.dedup ?? {};
  const sources = checkpoint?.sources ?? {};
  const moves = checkpoint?.moves ?? noMoves();
  return { meta, operator, maxWindowMs: compiled.maxWindowMs, dedup, sources, moves, pending: [], sinceCheckpoint: 0, charsSinceCheckpoint: 0, lastCheckpointChars: checkpoint?.chars ?? 0, spread: null, recordsApplied: 0 };
}

/** A replica's progress, for probes and status pages. */
export function statusOf(state: ReplicaState): ReplicaStatus {
  const { name, dataflowId, partition, role, epoch, hasStandby, standby, holdLogAfterLsn, configVersion, readers } = state.meta;
  const { lsn, appliedLsn, standbyAckLsn, checkpointLsn, outputSeq } = state.meta;
  const progress = { lsn, appliedLsn, standbyAckLsn, checkpointLsn, outputSeq, lateRecords: state.operator.lateRecords() };
  const load = { openEntries: state.operator.openEntries(), checkpointChars: state.lastCheckpointChars, recordsApplied: state.recordsApplied };
  const stage = Object.keys(state.sources).length > 0 ? { sources: copyProgress(state.sources) } : {};
  return { name, dataflowId, partition, role, epoch, hasStandby, standby, holdLogAfterLsn, configVersion, readers: [...readers], ...progress, ...load, ...stage };
}

/**
 * What a log entry counts towards the next checkpoint, characters: its records, but at
 * least a row's overhead, so a partition that only receives clock ticks still
 * checkpoints (and trims its log) now and then.
 */
export function logWeight(entry: LogEntry): number {
  return Math.max(entry.records.length, 16);
}

/**
 * Applies one stable log entry (a batch, a clock tick, a close entry, a stage's delivery
 * or a key-group move's step) to the operator, closing at most `closeLimit` results (`ReplicaTuning.closeKeysPerStep`).
 */
export function applyEntry(state: ReplicaState, entry: LogEntry, out: Emit<WindowResult>, closeLimit = CLOSE_KEYS_PER_STEP): void {
  if (isDeliveryEntry(entry)) return applyDelivery(state, entry, out, closeLimit);
  if (isMoveEntry(entry)) return applyMoveStep(state, moveStepOf(entry), out, closeLimit);
  const tickMs = tickTimeOf(entry, state.meta.spec.idleAdvanceMs);
  if (isCloseEntry(entry)) state.operator.process([], out, closeLimit);
  else if (tickMs !== null) state.operator.tick(tickMs, out, closeLimit);
  else {
    const records = parseRecords(entry);
    state.recordsApplied += records.length;
    state.operator.process(records, out, closeLimit);
  }
}

/**
 * A stage's delivery entry (issue 27): its new records, then a clock tick when the
 * effective watermark over every upstream partition rose. Both replicas start from the
 * same progress and apply the same entries, so they accept the same records.
 * @throws Error when the entry is not one the primary could have logged (a bug).
 */
function applyDelivery(state: ReplicaState, entry: LogEntry, out: Emit<WindowResult>, closeLimit: number): void {
  const delivery = deliveryOf(entry);
  const from = sourcesOf(state.meta.spec);
  const accepted = acceptDelivery(state.sources, delivery, expectedSources(from, state.sources, delivery));
  if (accepted.status === "unknown-source") throw new Error(`log entry ${entry.lsn}: a delivery from ${accepted.source}, which ${state.meta.dataflowId} does not read`);
  if (accepted.status !== "accepted") return;
  state.recordsApplied += accepted.records.length;
  if (accepted.records.length > 0) state.operator.process(accepted.records, out, closeLimit);
  if (accepted.tickMs !== null) state.operator.tick(accepted.tickMs, out, closeLimit);
}

/**
 * Records an applied entry's `(producer, seq)` for dedup: a client's batch in the own memory
 * and in what came with moved key groups, a tick in the own memory. A close entry and a
 * move step are no producer's batch, a delivery is judged by its source's progress.
 */
export function recordApplied(state: ReplicaState, entry: LogEntry, tuning: ReplicaTuning): void {
  if (isCloseEntry(entry) || isDeliveryEntry(entry) || isMoveEntry(entry)) return;
  if (entry.producer.startsWith("$")) recordSeq(state.dedup, entry.producer, entry.seq, tuning.dedupWindow);
  else if (state.moves.inherited.length === 0) recordSeq(state.dedup, entry.producer, entry.seq, tuning.dedupWindow);
  else recordBatch(state.dedup, state.moves.inherited, entry.producer, entry.seq, tuning.dedupWindow, () => groupsOfRecords(entry.records, state.moves.of));
}

/** The key groups of a logged batch's records (`of` groups in all). */
function groupsOfRecords(records: string, of: number): Set<number> {
  return new Set((JSON.parse(records) as FluxRecord[]).map((record) => keyGroupOf(record[0], of)));
}

/**
 * Rebuilds memory from durable records: the checkpoint (if any) plus the log entries
 * above it, which must be contiguous. Storage may hold a stale `lsn` and `appliedLsn`
 * (`progress-durability.ts`): the LSN is the log's last, and the entries above the stored
 * `appliedLsn` were applied before without emitting outputs. They are applied again now,
 * except on a primary with a standby (pending, until the standby confirms them again: a
 * forward) and on a retired replica (nobody may confirm them). Replayed outputs are
 * discarded, since they were persisted when first emitted; their count must land on
 * `meta.outputSeq`.
 */
export function restoreReplicaState(
  meta: ReplicaMeta,
  checkpoint: RestoredCheckpoint | null,
  log: readonly LogEntry[],
  tuning: ReplicaTuning,
): ReplicaState {
  const state = emptyReplicaState(meta, checkpoint ?? undefined);
  let outputSeq = checkpoint?.outputSeq ?? 0;
  let appliedLsn = checkpoint?.lsn ?? 0;
  let lastLsn = appliedLsn;
  const waits = meta.role === "retired" || (meta.role === "primary" && meta.hasStandby);
  const applyThrough = waits ? meta.appliedLsn : Number.POSITIVE_INFINITY;
  for (const entry of log) {
    if (entry.lsn <= lastLsn) continue;
    if (entry.lsn !== lastLsn + 1) throw new Error(`${meta.name}: log gap at LSN ${lastLsn + 1}`);
    lastLsn = entry.lsn;
    if (entry.lsn > applyThrough) {
      state.pending.push(entry);
      continue;
    }
    applyEntry(state, entry, () => void outputSeq++, tuning.closeKeysPerStep);
    recordApplied(state, entry, tuning);
    appliedLsn = entry.lsn;
    state.sinceCheckpoint += 1;
    state.charsSinceCheckpoint += logWeight(entry);
  }
  if (lastLsn < meta.lsn || appliedLsn < meta.appliedLsn || outputSeq !== meta.outputSeq) {
    throw new Error(
      `${meta.name}: restored to LSN ${appliedLsn} of ${lastLsn} with ${outputSeq} outputs, expected at least ${meta.appliedLsn} of ${meta.lsn} and ${meta.outputSeq}`,
    );
  }
  meta.lsn = lastLsn;
  meta.appliedLsn = appliedLsn;
  // Replayed records are not load: the count starts now.
  state.recordsApplied = 0;
  return state;
}

/**
 * Parses a log entry's records, checking their shape (`[key, timeMs, ...numbers or strings]`)
 * with a cheap loop rather than a schema, since this is the hot path.
 */
function parseRecords(entry: LogEntry): FluxRecord[] {
  const parsed: unknown = JSON.parse(entry.records);
  if (!Array.isArray(parsed)) throw new Error(`log entry ${entry.lsn}: records are not an array`);
  for (const record of parsed as unknown[]) {
    if (!isFluxRecord(record)) throw new Error(`log entry ${entry.lsn}: malformed record`);
  }
  return parsed as FluxRecord[];
}
