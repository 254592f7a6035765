/**
 * The in-memory state of one partition replica and how it is rebuilt from storage.
 * Invariant: `operator` and `dedup` reflect exactly the log entries up to
 * `meta.appliedLsn`; `pending` holds the logged entries above it, in LSN order.
 */
import { recordSeq } from "../dedup.ts";
import { compileDataflow } from "../operators/compile.ts";
import { tickTimeOf } from "./clock-ticks.ts";
/** A fresh replica state with no history. */
export function emptyReplicaState(meta, checkpoint) {
    const compiled = compileDataflow(meta.spec);
    const operator = compiled.bind(checkpoint?.operator);
    const dedup = checkpoint?.dedup ?? {};
    return { meta, operator, maxWindowMs: compiled.maxWindowMs, dedup, pending: [], sinceCheckpoint: 0, charsSinceCheckpoint: 0, lastCheckpointChars: 0 };
}
/** A replica's progress, for probes and status pages. */
export function statusOf(state) {
    const { name, dataflowId, partition, role, epoch, hasStandby, standby, holdLogAfterLsn, configVersion } = state.meta;
    const { lsn, appliedLsn, standbyAckLsn, checkpointLsn, outputSeq } = state.meta;
    const progress = { lsn, appliedLsn, standbyAckLsn, checkpointLsn, outputSeq, lateRecords: state.operator.lateRecords() };
    return { name, dataflowId, partition, role, epoch, hasStandby, standby, holdLogAfterLsn, configVersion, ...progress };
}
/**
 * What a log entry counts towards the next checkpoint, characters: its records, but at
 * least a row's overhead, so a partition that only receives clock ticks still
 * checkpoints (and trims its log) now and then.
 */
export function logWeight(entry) {
    return Math.max(entry.records.length, 16);
}
/** Applies one stable log entry (a batch or a clock tick) to the operator. */
export function applyEntry(state, entry, out) {
    const tickMs = tickTimeOf(entry, state.meta.spec.idleAdvanceMs);
    if (tickMs === null)
        state.operator.process(parseRecords(entry), out);
    else
        state.operator.tick(tickMs, out);
}
/**
 * Rebuilds memory from durable records: the checkpoint (if any) plus the log entries
 * above it, which must be contiguous. Replayed outputs are discarded, since they were
 * persisted when first emitted; the replayed count must land on `meta.outputSeq`.
 */
export function restoreReplicaState(meta, checkpoint, log, tuning) {
    const state = emptyReplicaState(meta, checkpoint ?? undefined);
    let outputSeq = checkpoint?.outputSeq ?? 0;
    let appliedLsn = checkpoint?.lsn ?? 0;
    for (const entry of log) {
        if (entry.lsn <= appliedLsn)
            continue;
        if (entry.lsn > meta.lsn)
            break;
        if (entry.lsn <= meta.appliedLsn) {
            if (entry.lsn !== appliedLsn + 1)
                throw new Error(`${meta.name}: log gap at LSN ${appliedLsn + 1}`);
            applyEntry(state, entry, () => void outputSeq++);
            recordSeq(state.dedup, entry.producer, entry.seq, tuning.dedupWindow);
            appliedLsn = entry.lsn;
            state.sinceCheckpoint += 1;
            state.charsSinceCheckpoint += logWeight(entry);
        }
        else {
            state.pending.push(entry);
        }
    }
    if (appliedLsn !== meta.appliedLsn || outputSeq !== meta.outputSeq) {
        throw new Error(`${meta.name}: restored to LSN ${appliedLsn} with ${outputSeq} outputs, expected ${meta.appliedLsn} and ${meta.outputSeq}`);
    }
    return state;
}
/**
 * Parses a log entry's records, checking their shape (`[key, timeMs, ...numbers or strings]`)
 * with a cheap loop rather than a schema, since this is the hot path.
 */
function parseRecords(entry) {
    const parsed = JSON.parse(entry.records);
    if (!Array.isArray(parsed))
        throw new Error(`log entry ${entry.lsn}: records are not an array`);
    for (const record of parsed) {
        if (!isFluxRecord(record))
            throw new Error(`log entry ${entry.lsn}: malformed record`);
    }
    return parsed;
}
function isFluxRecord(value) {
    if (!Array.isArray(value) || value.length < 2 || typeof value[0] !== "string" || typeof value[1] !== "number")
        return false;
    for (let i = 2; i < value.length; i++)
        if (typeof value[i] !== "number" && typeof value[i] !== "string")
            return false;
    return true;
}
