/**
 * Online recovery, replica side (DESIGN.md §4). The survivor offers its stored checkpoint,
 * already serialized and chunked in storage, so seeding costs it no serialization; it holds
 * its log above the checkpoint's LSN (and takes no new checkpoint, nor finishes a spread
 * one: `checkpoint-steps.ts`) until the new standby is attached. Only a complete
 * checkpoint is ever offered. The fresh replica stages each chunk and restores the slice it completes
 * (`seed-progress.ts`), stages outputs, then installs the staged rows atomically as its
 * checkpoint and becomes a standby that catches up from the survivor's log.
 */
import { restoreCheckpoint, type RestoredCheckpoint } from "../checkpoint/checkpoint-pieces.ts";
import { progressAfterChunk } from "../checkpoint/seed-progress.ts";
import type { DataflowSpec } from "../wire/dataflow-spec.ts";
import type { BeginSeedReply, FinishSeed, FinishSeedReply, NumberedOutput, Refusal, SeedChunkReply, SeedProgressReply } from "../wire/replica-rpc.ts";
import { NOT_INITIALISED, type ReplicaHost } from "./replica-host.ts";
import { checkEpoch } from "./replica-steps.ts";

const snapshotId = (checkpointLsn: number) => `c${checkpointLsn}`;

/** Survivor: names its stored checkpoint as the seed snapshot (taking one if it has none) and holds the log above it. */
export function beginSeed(host: ReplicaHost, epoch: number): BeginSeedReply {
  const state = host.load();
  if (!state) return NOT_INITIALISED;
  const refusal = checkEpoch(state, epoch, "primary");
  if (refusal) return refusal;
  if (host.storage.checkpointChunkCount(state.meta.checkpointLsn) === 0) host.checkpointNow();
  const { checkpointLsn: lsn, checkpointOutputSeq: outputSeq } = state.meta;
  host.holdLog(lsn);
  return { status: "ok", id: snapshotId(lsn), lsn, outputSeq, chunks: host.storage.checkpointChunkCount(lsn) };
}

/** Survivor: one chunk of the seed snapshot; `gone` once the stored checkpoint is no longer that snapshot. */
export function readSeedChunk(host: ReplicaHost, epoch: number, id: string, index: number): SeedChunkReply {
  const state = host.load();
  if (!state) return NOT_INITIALISED;
  const refusal = checkEpoch(state, epoch, "primary");
  if (refusal) return refusal;
  const body = snapshotId(state.meta.checkpointLsn) === id ? host.storage.readCheckpointChunk(state.meta.checkpointLsn, index) : null;
  return body === null ? { status: "gone" } : { status: "ok", body, lsn: state.meta.lsn };
}

/**
 * The fresh replica's side: how much of `snapshot` (of `chunks` chunks) it holds in
 * storage, so a seed resumed by another monitor goes on from there. Refused once the
 * replica holds state.
 */
export function seedProgress(host: ReplicaHost, snapshot: string, chunks: number): SeedProgressReply {
  const state = host.load();
  if (state) return { status: "wrong-role", role: state.meta.role };
  const missing = host.storage.firstMissingSeedChunk(snapshot, chunks);
  return { status: "ok", chunks: missing ?? chunks, outputSeq: host.storage.countOutputs() };
}

/** The fresh replica's side: stage a chunk and restore the slice it completes. Refused once the replica holds state. */
export function acceptSeedChunk(host: ReplicaHost, snapshot: string, index: number, body: string, spec: DataflowSpec): { status: "ok" } | Refusal {
  const state = host.load();
  if (state) return { status: "wrong-role", role: state.meta.role };
  host.storage.stageSeedChunk(snapshot, index, body);
  host.seeding = progressAfterChunk(host.seeding, spec, snapshot, index, body);
  return { status: "ok" };
}

/** The fresh replica's side: stage copied outputs. */
export function acceptOutputs(host: ReplicaHost, outputs: readonly NumberedOutput[]): { status: "ok" } | Refusal {
  const state = host.load();
  if (state) return { status: "wrong-role", role: state.meta.role };
  host.storage.stageOutputs(outputs);
  return { status: "ok" };
}

/** Installs the staged snapshot: the replica becomes a standby at `msg.epoch` holding LSN `msg.lsn`. */
export function finishSeed(host: ReplicaHost, msg: FinishSeed): FinishSeedReply {
  const existing = host.load();
  if (existing) {
    const done = existing.meta.role === "standby" && existing.meta.epoch >= msg.epoch;
    return done ? { status: "ok", lsn: existing.meta.lsn } : { status: "wrong-role", role: existing.meta.role };
  }
  const missing = host.storage.firstMissingSeedChunk(msg.snapshotId, msg.chunks);
  if (missing !== null) return { status: "incomplete", missing: `snapshot chunk ${missing}` };
  const outputs = host.storage.countOutputs();
  if (outputs < msg.outputSeq) return { status: "incomplete", missing: `outputs ${outputs + 1}..${msg.outputSeq}` };
  const checkpoint = seededCheckpoint(host, msg);
  if ("missing" in checkpoint) return { status: "incomplete", missing: checkpoint.missing };
  if (checkpoint.lsn !== msg.lsn || checkpoint.outputSeq !== msg.outputSeq) {
    return { status: "incomplete", missing: `snapshot ${msg.snapshotId} does not match LSN ${msg.lsn}` };
  }
  const { name, dataflowId, partition, spec, epoch, lsn, outputSeq } = msg;
  const meta = {
    v: 1 as const,
    name,
    dataflowId,
    partition,
    spec,
    role: "standby" as const,
    epoch,
    hasStandby: false,
    standby: null,
    holdLogAfterLsn: null,
    configVersion: 0,
    readers: [],
    lsn,
    appliedLsn: lsn,
    standbyAckLsn: 0,
    checkpointLsn: lsn,
    checkpointOutputSeq: outputSeq,
    outputSeq,
  };
  host.storage.installSeed(meta, msg.snapshotId, msg.chunks);
  host.seeding = null;
  host.adopt(meta, checkpoint);
  return { status: "ok", lsn };
}

/**
 * The state the staged snapshot holds: the one restored while its chunks arrived, when
 * that saw every chunk in order; otherwise restored from the staged rows now.
 */
function seededCheckpoint(host: ReplicaHost, msg: FinishSeed): RestoredCheckpoint | { missing: string } {
  const progress = host.seeding;
  try {
    if (progress?.builder && progress.snapshotId === msg.snapshotId && progress.next === msg.chunks) return progress.builder.finish();
    const restored = restoreCheckpoint(msg.spec, host.storage.readStagedSeed(msg.snapshotId, msg.chunks));
    return restored ?? { missing: `snapshot ${msg.snapshotId} is empty` };
  } catch (err) {
    return { missing: `snapshot ${msg.snapshotId} does not restore: ${err instanceof Error ? err.message : String(err)}` };
  }
}
