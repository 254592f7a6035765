/**
 * The in-memory state of one partition replica and how it is rebuilt from storage.
 * Invariant: `operator` and `dedup` reflect exactly the log entries up to
 * `meta.appliedLsn`; `pending` holds the logged entries above it, in LSN order.
 */
import { tumblingWindow, type TumblingWindowOperator } from "../operators/tumbling-window.ts";
import { recordSeq } from "../dedup.ts";
import type { Checkpoint, DedupState, LogEntry, ReplicaMeta, TumblingWindowState } from "../wire/persisted.ts";
import type { NumberedOutput } from "../wire/replica-rpc.ts";
import type { WindowRecord } from "../wire/window-result.ts";

/** Everything a replica holds in memory. */
export interface ReplicaState {
  meta: ReplicaMeta;
  op: TumblingWindowOperator;
  operator: TumblingWindowState;
  dedup: DedupState;
  pending: LogEntry[];
  /** Batches applied since the last checkpoint. */
  sinceCheckpoint: number;
  /** Characters of records applied since the last checkpoint. */
  charsSinceCheckpoint: number;
  /** Size of the last checkpoint taken by this process, characters (0: none yet). */
  lastCheckpointChars: number;
}


/** Storage writes a step asks for; the adapter performs them in one transaction with `meta`. */
export interface ReplicaEffects {
  log: LogEntry[];
  outputs: NumberedOutput[];
  /** A new checkpoint as of `lsn`: `body` is a serialized {@link Checkpoint}. */
  checkpoint?: { lsn: number; body: string };
  /** Log entries with LSN ≤ this may be deleted. */
  trimLogThrough?: number;
}

/** Tuning a replica needs from {@link FluxConfig}. */
export interface ReplicaTuning {
  dedupWindow: number;
  checkpointEvery: number;
}

/** A fresh replica state with no history. */
export function emptyReplicaState(meta: ReplicaMeta): ReplicaState {
  const op = tumblingWindow(meta.spec);
  return { meta, op, operator: op.init(), dedup: {}, pending: [], sinceCheckpoint: 0, charsSinceCheckpoint: 0, lastCheckpointChars: 0 };
}

/**
 * Rebuilds memory from durable records: the checkpoint (if any) plus the log entries
 * above it, which must be contiguous. Replayed outputs are discarded, since they were
 * persisted when first emitted; the replayed count must land on `meta.outputSeq`.
 */
export function restoreReplicaState(
  meta: ReplicaMeta,
  checkpoint: Checkpoint | null,
  log: readonly LogEntry[],
  tuning: ReplicaTuning,
): ReplicaState {
  const state = emptyReplicaState(meta);
  let outputSeq = 0;
  let appliedLsn = 0;
  if (checkpoint) {
    state.operator = checkpoint.operator;
    state.dedup = checkpoint.dedup;
    outputSeq = checkpoint.outputSeq;
    appliedLsn = checkpoint.lsn;
  }
  for (const entry of log) {
    if (entry.lsn <= appliedLsn) continue;
    if (entry.lsn > meta.lsn) break;
    if (entry.lsn <= meta.appliedLsn) {
      if (entry.lsn !== appliedLsn + 1) throw new Error(`${meta.name}: log gap at LSN ${appliedLsn + 1}`);
      state.operator = state.op.process(state.operator, parseRecords(entry), () => void outputSeq++);
      recordSeq(state.dedup, entry.producer, entry.seq, tuning.dedupWindow);
      appliedLsn = entry.lsn;
      state.sinceCheckpoint += 1;
      state.charsSinceCheckpoint += entry.records.length;
    } else {
      state.pending.push(entry);
    }
  }
  if (appliedLsn !== meta.appliedLsn || outputSeq !== meta.outputSeq) {
    throw new Error(
      `${meta.name}: restored to LSN ${appliedLsn} with ${outputSeq} outputs, expected ${meta.appliedLsn} and ${meta.outputSeq}`,
    );
  }
  return state;
}

/**
 * Parses a log entry's records, checking their shape (`[key, timeMs, ...numbers]`)
 * with a cheap loop rather than a schema, since this is the hot path.
 */
export function parseRecords(entry: LogEntry): WindowRecord[] {
  const parsed: unknown = JSON.parse(entry.records);
  if (!Array.isArray(parsed)) throw new Error(`log entry ${entry.lsn}: records are not an array`);
  for (const record of parsed as unknown[]) {
    if (!isWindowRecord(record)) throw new Error(`log entry ${entry.lsn}: malformed record`);
  }
  return parsed as WindowRecord[];
}

function isWindowRecord(value: unknown): value is WindowRecord {
  if (!Array.isArray(value) || value.length < 2 || typeof value[0] !== "string") return false;
  for (let i = 1; i < value.length; i++) if (typeof value[i] !== "number") return false;
  return true;
}
