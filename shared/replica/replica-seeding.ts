/**
 * Online recovery, replica side (DESIGN.md §4): the survivor cuts a snapshot of its
 * stable state into chunks small enough for RPC and holds its log above the snapshot's
 * LSN; the fresh replica stages chunks and outputs, then installs them atomically and
 * becomes a standby that catches up from the survivor's log.
 */
import { CheckpointSchema } from "../wire/persisted.ts";
import type { BeginSeedReply, FinishSeed, FinishSeedReply, NumberedOutput, Refusal, SeedChunkReply } from "../wire/replica-rpc.ts";
import { NOT_INITIALISED, type ReplicaHost } from "./replica-host.ts";
import { checkEpoch } from "./replica-steps.ts";

/** The survivor's side: at most one snapshot in memory, re-cut if the object restarted. */
export class SeedSource {
  #snapshot: { id: string; chunks: string[] } | null = null;

  readonly #chunkChars: number;

  /** @param chunkChars largest chunk, characters (keep well below the RPC size limit). */
  constructor(chunkChars: number) {
    this.#chunkChars = chunkChars;
  }

  /** Cuts a snapshot of the primary's stable state and holds the log above its LSN. */
  begin(host: ReplicaHost, epoch: number): BeginSeedReply {
    const state = host.load();
    if (!state) return NOT_INITIALISED;
    const refusal = checkEpoch(state, epoch, "primary");
    if (refusal) return refusal;
    const checkpoint = host.snapshot();
    if (!checkpoint) return NOT_INITIALISED;
    host.holdLog(checkpoint.lsn);
    const body = JSON.stringify(checkpoint);
    const chunks: string[] = [];
    for (let at = 0; at < body.length; at += this.#chunkChars) chunks.push(body.slice(at, at + this.#chunkChars));
    // Same epoch and LSN means the same stable state, so the id names the content.
    const id = `e${epoch}-l${checkpoint.lsn}-o${checkpoint.outputSeq}`;
    this.#snapshot = { id, chunks };
    return { status: "ok", id, lsn: checkpoint.lsn, outputSeq: checkpoint.outputSeq, chunks: chunks.length };
  }

  /** One chunk of the current snapshot; `gone` if it was replaced or lost with memory. */
  chunk(host: ReplicaHost, epoch: number, id: string, index: number): SeedChunkReply {
    const state = host.load();
    if (!state) return NOT_INITIALISED;
    const refusal = checkEpoch(state, epoch, "primary");
    if (refusal) return refusal;
    const body = this.#snapshot?.id === id ? this.#snapshot.chunks[index] : undefined;
    return body === undefined ? { status: "gone" } : { status: "ok", body };
  }
}

/** The fresh replica's side: stage a chunk. Refused once the replica holds state. */
export function acceptSeedChunk(host: ReplicaHost, snapshotId: string, index: number, body: string): { status: "ok" } | Refusal {
  const state = host.load();
  if (state) return { status: "wrong-role", role: state.meta.role };
  host.storage.stageSeedChunk(snapshotId, index, body);
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
  const staged = host.storage.readStagedSeed(msg.snapshotId, msg.chunks);
  if ("missing" in staged) return { status: "incomplete", missing: `snapshot chunk ${staged.missing}` };
  const outputs = host.storage.countOutputs();
  if (outputs < msg.outputSeq) return { status: "incomplete", missing: `outputs ${outputs + 1}..${msg.outputSeq}` };
  const checkpoint = CheckpointSchema.parse(JSON.parse(staged.body));
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
    holdLogAfterLsn: null,
    configVersion: 0,
    lsn,
    appliedLsn: lsn,
    standbyAckLsn: 0,
    checkpointLsn: lsn,
    outputSeq,
  };
  host.storage.installSeed(meta, staged.body);
  host.adopt(meta, checkpoint);
  return { status: "ok", lsn };
}
