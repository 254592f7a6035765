/**
 * Online recovery, replica side (DESIGN.md §4). The survivor offers its stored checkpoint,
 * already serialized and chunked in storage, so seeding costs it no serialization; it holds
 * its log above the checkpoint's LSN (and takes no new checkpoint) until the new standby
 * is attached. The fresh replica stages chunks and outputs, then installs them atomically
 * as a standby that catches up from the survivor's log.
 */
import { CheckpointSchema } from "../wire/persisted.ts";
import { NOT_INITIALISED } from "./replica-host.ts";
import { checkEpoch } from "./replica-steps.ts";
const snapshotId = (checkpointLsn) => `c${checkpointLsn}`;
/** Survivor: names its stored checkpoint as the seed snapshot (taking one if it has none) and holds the log above it. */
export function beginSeed(host, epoch) {
    const state = host.load();
    if (!state)
        return NOT_INITIALISED;
    const refusal = checkEpoch(state, epoch, "primary");
    if (refusal)
        return refusal;
    if (host.storage.checkpointChunkCount() === 0)
        host.checkpointNow();
    const { checkpointLsn: lsn, checkpointOutputSeq: outputSeq } = state.meta;
    host.holdLog(lsn);
    return { status: "ok", id: snapshotId(lsn), lsn, outputSeq, chunks: host.storage.checkpointChunkCount() };
}
/** Survivor: one chunk of the seed snapshot; `gone` once the stored checkpoint is no longer that snapshot. */
export function readSeedChunk(host, epoch, id, index) {
    const state = host.load();
    if (!state)
        return NOT_INITIALISED;
    const refusal = checkEpoch(state, epoch, "primary");
    if (refusal)
        return refusal;
    const body = snapshotId(state.meta.checkpointLsn) === id ? host.storage.readCheckpointChunk(index) : null;
    return body === null ? { status: "gone" } : { status: "ok", body };
}
/** The fresh replica's side: stage a chunk. Refused once the replica holds state. */
export function acceptSeedChunk(host, snapshot, index, body) {
    const state = host.load();
    if (state)
        return { status: "wrong-role", role: state.meta.role };
    host.storage.stageSeedChunk(snapshot, index, body);
    return { status: "ok" };
}
/** The fresh replica's side: stage copied outputs. */
export function acceptOutputs(host, outputs) {
    const state = host.load();
    if (state)
        return { status: "wrong-role", role: state.meta.role };
    host.storage.stageOutputs(outputs);
    return { status: "ok" };
}
/** Installs the staged snapshot: the replica becomes a standby at `msg.epoch` holding LSN `msg.lsn`. */
export function finishSeed(host, msg) {
    const existing = host.load();
    if (existing) {
        const done = existing.meta.role === "standby" && existing.meta.epoch >= msg.epoch;
        return done ? { status: "ok", lsn: existing.meta.lsn } : { status: "wrong-role", role: existing.meta.role };
    }
    const staged = host.storage.readStagedSeed(msg.snapshotId, msg.chunks);
    if ("missing" in staged)
        return { status: "incomplete", missing: `snapshot chunk ${staged.missing}` };
    const outputs = host.storage.countOutputs();
    if (outputs < msg.outputSeq)
        return { status: "incomplete", missing: `outputs ${outputs + 1}..${msg.outputSeq}` };
    const checkpoint = CheckpointSchema.parse(JSON.parse(staged.body));
    if (checkpoint.lsn !== msg.lsn || checkpoint.outputSeq !== msg.outputSeq) {
        return { status: "incomplete", missing: `snapshot ${msg.snapshotId} does not match LSN ${msg.lsn}` };
    }
    const { name, dataflowId, partition, spec, epoch, lsn, outputSeq } = msg;
    const meta = {
        v: 1,
        name,
        dataflowId,
        partition,
        spec,
        role: "standby",
        epoch,
        hasStandby: false,
        standby: null,
        holdLogAfterLsn: null,
        configVersion: 0,
        lsn,
        appliedLsn: lsn,
        standbyAckLsn: 0,
        checkpointLsn: lsn,
        checkpointOutputSeq: outputSeq,
        outputSeq,
    };
    host.storage.installSeed(meta, staged.body);
    host.adopt(meta, checkpoint);
    return { status: "ok", lsn };
}
