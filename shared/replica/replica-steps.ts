/**
 * The replica state machine's steps (DESIGN.md §4). Each takes the state and a message,
 * mutates the state and returns a reply plus the storage writes the adapter must make
 * atomically before it answers. Steps never do I/O.
 */
import { highestSeq } from "../dedup.ts";
import { judgeIncoming, movingAway, uncoveredByPending } from "../keygroups/move-admission.ts";
import type { Refusal } from "../wire/replica-rpc.ts";
import type { BatchOutcome, InitReplica, Replicate, ReplicateReply, Write } from "../wire/replica-rpc.ts";
import type { LogEntry, Role } from "../wire/persisted.ts";
import { startCheckpoint } from "./checkpoint-steps.ts";
import { applyEntry, logWeight, recordApplied, type ReplicaEffects, type ReplicaState, type ReplicaTuning } from "./replica-state.ts";

/** Log characters since the last checkpoint that stand in for `checkpointEvery` batches (large batches need not wait for that many). */
const CHECKPOINT_LOG_CHARS = 4_000_000;

/** A step's outcome: the reply to send and the writes to make first. */
export interface StepResult<Reply> {
  reply: Reply;
  effects: ReplicaEffects;
}

const noEffects = (): ReplicaEffects => ({ log: [], outputs: [] });

/**
 * Applies a monitor's configuration to an existing replica. Refuses an older epoch,
 * or an older route version within the epoch (a configuration delivered late).
 * Losing the standby (or being promoted) makes every pending entry stable at once: it is
 * durable on the only replica left. Gaining a standby restarts log retention from 0
 * until the standby acknowledges.
 */
export function configure(state: ReplicaState, msg: InitReplica, tuning: ReplicaTuning): StepResult<{ status: "ok" } | Refusal> {
  const meta = state.meta;
  const older = msg.epoch < meta.epoch || (msg.epoch === meta.epoch && msg.version < meta.configVersion);
  if (older) return { reply: { status: "stale", epoch: meta.epoch }, effects: noEffects() };
  const effects = noEffects();
  meta.configVersion = msg.version;
  const hadStandby = meta.role === "primary" && meta.hasStandby;
  // A seeding hold (set by `beginSeed`) lasts until the seeded standby is attached
  // or the epoch changes; configurations never shorten it otherwise.
  if (msg.epoch !== meta.epoch || (msg.hasStandby && !hadStandby)) meta.holdLogAfterLsn = null;
  meta.epoch = msg.epoch;
  meta.role = msg.role;
  meta.hasStandby = msg.role === "primary" && msg.hasStandby;
  meta.standby = meta.hasStandby ? (msg.standby ?? null) : null;
  meta.readers = msg.readers ?? [];
  // A retired replica keeps its pending entries unapplied: nobody acknowledged them.
  if (meta.role === "primary" && !meta.hasStandby && state.pending.length > 0) applyStable(state, state.pending.splice(0), tuning, effects);
  if (meta.hasStandby && !hadStandby) meta.standbyAckLsn = 0;
  return { reply: { status: "ok" }, effects };
}

/** Refuses a call from another epoch or one that needs a role this replica does not hold. */
export function checkEpoch(state: ReplicaState, epoch: number, role: Role): Refusal | null {
  if (epoch < state.meta.epoch) return { status: "stale", epoch: state.meta.epoch };
  if (epoch > state.meta.epoch) return { status: "behind", epoch: state.meta.epoch };
  if (state.meta.role !== role) return { status: "wrong-role", role: state.meta.role };
  return null;
}

/**
 * What the primary does with one batch of a write: answer now, or once the entry at
 * `lsn` is stable (applied, and held by the standby if there is one).
 */
export type BatchVerdict = { done: BatchOutcome } | { waitLsn: number; status: "applied" | "duplicate" };

/**
 * Primary: dedups each `(producer, seq)` against applied and pending entries (and the
 * batches before it in the same write), assigns the next LSNs and logs the new entries.
 * Without a standby they are stable at once and applied. A duplicate of a pending entry
 * waits for that entry (but records of moved-in groups it lacks are logged: issue 28); one
 * already applied waits until the standby holds it too. A batch with records of a key
 * group moving away is not logged (`blocked`; the write's other batches are).
 */
export function logBatches(state: ReplicaState, msg: Write, tuning: ReplicaTuning): StepResult<{ status: "ok"; verdicts: BatchVerdict[] } | Refusal> {
  const refusal = checkEpoch(state, msg.epoch, "primary");
  if (refusal) return { reply: refusal, effects: noEffects() };
  const effects = noEffects();
  const meta = state.meta;
  const verdicts = msg.batches.map((batch): BatchVerdict => {
    // Only this batch waits: a coalesced write carries other clients' batches too.
    const moving = movingAway(state.moves, state.pending, [batch]);
    if (moving !== null) return { done: { status: "blocked", reason: moving, until: "routing sends the group to its new partition" } };
    const judged = judgeIncoming(state.dedup, state.moves, batch, tuning.dedupWindow);
    const { verdict } = judged;
    let { records } = judged;
    if (verdict === "too-old") return { done: { status: "too-old", high: highestSeq(state.dedup, batch.producer) } };
    const pending = state.pending.filter((e) => e.producer === batch.producer && e.seq === batch.seq);
    const last = pending[pending.length - 1];
    if (last) {
      const left = verdict === "new" ? uncoveredByPending(state.moves, records, pending) : null;
      if (left === null) return { waitLsn: last.lsn, status: "duplicate" };
      records = left;
    }
    if (verdict === "duplicate") {
      if (!meta.hasStandby || meta.standbyAckLsn >= meta.appliedLsn) return { done: { status: "duplicate", lsn: meta.appliedLsn, replicated: meta.hasStandby } };
      return { waitLsn: meta.appliedLsn, status: "duplicate" };
    }
    const lsn = appendEntry(state, { ...batch, records }, tuning, effects);
    if (meta.hasStandby) return { waitLsn: lsn, status: "applied" };
    return { done: { status: "applied", lsn, replicated: false, late: effects.late?.get(lsn) ?? 0 } };
  });
  return { reply: { status: "ok", verdicts }, effects };
}

/**
 * Standby: logs and applies entries strictly in LSN order, skipping those it holds.
 * Answers `gap` with its LSN when it cannot reach `upToLsn` from what it was sent.
 */
export function replicate(state: ReplicaState, msg: Replicate, tuning: ReplicaTuning): StepResult<ReplicateReply> {
  const refusal = checkEpoch(state, msg.epoch, "standby");
  if (refusal) return { reply: refusal, effects: noEffects() };
  const effects = noEffects();
  const fresh: LogEntry[] = [];
  for (const entry of [...msg.entries].sort((a, b) => a.lsn - b.lsn)) {
    if (entry.lsn <= state.meta.lsn) continue;
    if (entry.lsn !== state.meta.lsn + 1) break;
    fresh.push(entry);
    state.meta.lsn = entry.lsn;
  }
  effects.log = fresh;
  applyStable(state, fresh, tuning, effects);
  const lsn = state.meta.lsn;
  return { reply: lsn >= msg.upToLsn ? { status: "ok", lsn } : { status: "gap", lsn }, effects };
}

/** Primary: learns that the standby holds `lsn`, and applies the entries that became stable. */
export function ackStandby(state: ReplicaState, lsn: number, tuning: ReplicaTuning): StepResult<null> {
  const effects = noEffects();
  const acked = Math.min(lsn, state.meta.lsn);
  if (acked > state.meta.standbyAckLsn) state.meta.standbyAckLsn = acked;
  let ready = 0;
  while (ready < state.pending.length && (state.pending[ready]?.lsn ?? Infinity) <= acked) ready++;
  if (ready > 0) applyStable(state, state.pending.splice(0, ready), tuning, effects);
  return { reply: null, effects };
}

/**
 * Primary: logs `body` as the next entry. With a standby it waits, pending, for the
 * standby; without one it is stable at once and applied. Returns its LSN.
 */
export function appendEntry(state: ReplicaState, body: Omit<LogEntry, "lsn">, tuning: ReplicaTuning, effects: ReplicaEffects): number {
  const entry: LogEntry = { lsn: state.meta.lsn + 1, ...body };
  state.meta.lsn = entry.lsn;
  effects.log.push(entry);
  if (state.meta.hasStandby) state.pending.push(entry);
  else applyStable(state, [entry], tuning, effects);
  return entry.lsn;
}

/** Applies stable entries to the operator and dedup state, numbering outputs and checkpointing on schedule. */
function applyStable(state: ReplicaState, entries: readonly LogEntry[], tuning: ReplicaTuning, effects: ReplicaEffects): void {
  const meta = state.meta;
  for (const entry of entries) {
    const lateBefore = state.operator.lateRecords();
    applyEntry(
      state,
      entry,
      (result) => {
        meta.outputSeq += 1;
        effects.outputs.push({ outputSeq: meta.outputSeq, result });
      },
      tuning.closeKeysPerStep,
    );
    recordApplied(state, entry, tuning);
    const late = state.operator.lateRecords() - lateBefore;
    if (late > 0) (effects.late ??= new Map()).set(entry.lsn, late);
    meta.appliedLsn = entry.lsn;
    state.sinceCheckpoint += 1;
    state.charsSinceCheckpoint += logWeight(entry);
  }
  // A checkpoint writes the whole state, so it also waits until the log since the last one
  // is a quarter of that size: checkpoint cost stays proportional to the data ingested,
  // and a restart replays at most that much log (issue 5: large states). The count rule
  // (`checkpointEvery` batches) spares small states rows; batches so large that
  // `checkpointLogChars` of log came first do not wait for it. While a fresh standby is
  // seeded from the stored checkpoint, that checkpoint must stay as it is.
  // A large state's checkpoint is spread over the next steps (`checkpoint-steps.ts`).
  const chars = state.charsSinceCheckpoint;
  const enough = state.sinceCheckpoint >= tuning.checkpointEvery || chars >= (tuning.checkpointLogChars ?? CHECKPOINT_LOG_CHARS);
  const due = enough && chars * 4 >= state.lastCheckpointChars;
  if (due && meta.holdLogAfterLsn === null && state.spread === null) startCheckpoint(state, effects, tuning);
}
