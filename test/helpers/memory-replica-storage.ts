/**
 * In-memory `ReplicaStorage` for Node tests and the simulator. It keeps what a real
 * store keeps durably, by the same rule (`durableMeta`: LSNs may stay behind);
 * `ReplicaHost` keeps the rest, so dropping the host and building a new one over the same
 * storage is a crash-and-restart.
 */
import type { ResultFilter } from "../../shared/operators/operator.ts";
import { durableMeta } from "../../shared/replica/progress-durability.ts";
import type { ReplicaEffects } from "../../shared/replica/replica-state.ts";
import type { ReplicaStorage } from "../../shared/replica/replica-storage.ts";
import { piecesToRows } from "../../shared/checkpoint/checkpoint-rows.ts";
import type { LogEntry, ReplicaMeta } from "../../shared/wire/persisted.ts";
import { compareResults, isAfter, type WindowResult } from "../../shared/wire/window-result.ts";
import type { NumberedOutput } from "../../shared/wire/replica-rpc.ts";

/** Small chunks, so tests and the simulator copy several of them. */
const MEMORY_CHUNK_CHARS = 400;

export class MemoryReplicaStorage implements ReplicaStorage {
  meta: ReplicaMeta | null = null;
  readonly log = new Map<number, LogEntry>();
  /** The `checkpoint` table's rows in chunk order: the stored checkpoint's, then any staged by a spread one (`checkpoint-staging.ts`). */
  checkpointRows: Array<{ lsn: number; body: string }> = [];
  outputs: NumberedOutput[] = [];
  readonly staged = new Map<string, string>();
  /** When set, the next `persist` throws before writing anything (a failed transaction). */
  failNextPersist = false;

  loadMeta(): ReplicaMeta | null {
    return this.meta ? structuredClone(this.meta) : null;
  }

  /** The stored checkpoint's rows (those of the stored meta's `checkpointLsn`). */
  get checkpoint(): string[] {
    return this.loadCheckpointRows(this.meta?.checkpointLsn ?? 0);
  }

  loadCheckpointRows(lsn: number): string[] {
    return this.checkpointRows.filter((row) => row.lsn === lsn).map((row) => row.body);
  }

  checkpointChunkCount(lsn: number): number {
    return this.loadCheckpointRows(lsn).length;
  }

  readCheckpointChunk(lsn: number, index: number): string | null {
    const row = this.checkpointRows[index];
    return row?.lsn === lsn ? row.body : null;
  }

  readLog(fromLsn: number, toLsn: number): LogEntry[] {
    return [...this.log.values()]
      .filter((e) => e.lsn >= fromLsn && e.lsn <= toLsn)
      .sort((a, b) => a.lsn - b.lsn)
      .map((e) => ({ ...e }));
  }

  readOutputs(filter: ResultFilter, windowSizeMs: number): WindowResult[] {
    return this.outputs
      .map((o) => o.result)
      .filter(
        (r) =>
          (filter.key === undefined || r.key === filter.key) &&
          (filter.fromMs === undefined || r.windowStartMs + windowSizeMs > filter.fromMs) &&
          (filter.toMs === undefined || r.windowStartMs < filter.toMs) &&
          (filter.after === undefined || isAfter(r, filter.after)),
      )
      .sort(compareResults)
      .slice(0, filter.limit ?? Number.POSITIVE_INFINITY)
      .map((r) => structuredClone(r));
  }

  readOutputPage(afterSeq: number, limit: number): NumberedOutput[] {
    return this.outputs.filter((o) => o.outputSeq > afterSeq).slice(0, limit).map((o) => structuredClone(o));
  }

  stageSeedChunk(snapshotId: string, index: number, body: string): void {
    this.staged.set(`${snapshotId}#${index}`, body);
  }

  stageOutputs(outputs: readonly NumberedOutput[]): void {
    for (const o of outputs) {
      this.outputs = this.outputs.filter((x) => x.outputSeq !== o.outputSeq);
      this.outputs.push(structuredClone(o));
    }
    this.outputs.sort((a, b) => a.outputSeq - b.outputSeq);
  }

  firstMissingSeedChunk(snapshotId: string, chunks: number): number | null {
    for (let i = 0; i < chunks; i++) if (!this.staged.has(`${snapshotId}#${i}`)) return i;
    return null;
  }

  readStagedSeed(snapshotId: string, chunks: number): string[] {
    return Array.from({ length: chunks }, (_, i) => this.staged.get(`${snapshotId}#${i}`) ?? "").filter((row) => row !== "");
  }

  countOutputs(): number {
    return this.outputs.length;
  }

  installSeed(meta: ReplicaMeta, snapshotId: string, chunks: number): void {
    this.persist(meta, { log: [], outputs: [] });
    this.checkpointRows = this.readStagedSeed(snapshotId, chunks).map((body) => ({ lsn: meta.checkpointLsn, body }));
    this.staged.clear();
  }

  wipe(): void {
    this.meta = null;
    this.log.clear();
    this.checkpointRows = [];
    this.outputs = [];
    this.staged.clear();
  }

  persist(meta: ReplicaMeta, effects: ReplicaEffects): void {
    if (this.failNextPersist) {
      this.failNextPersist = false;
      throw new Error("injected storage failure");
    }
    this.meta = structuredClone(durableMeta(this.meta, meta, effects));
    for (const entry of effects.log) this.log.set(entry.lsn, { ...entry });
    for (const output of effects.outputs) this.outputs.push(structuredClone(output));
    if (effects.checkpoint) {
      const { lsn, pieces } = effects.checkpoint;
      this.checkpointRows = piecesToRows(pieces, MEMORY_CHUNK_CHARS).map((body) => ({ lsn, body }));
    }
    const stage = effects.checkpointStage;
    if (stage) {
      if (stage.begin && !stage.complete) this.checkpointRows = this.checkpointRows.filter((row) => row.lsn === meta.checkpointLsn);
      for (const body of piecesToRows(stage.pieces, MEMORY_CHUNK_CHARS)) this.checkpointRows.push({ lsn: stage.lsn, body });
      if (stage.complete) this.checkpointRows = this.checkpointRows.filter((row) => row.lsn === stage.lsn);
    }
    if (effects.trimLogThrough !== undefined) {
      for (const lsn of [...this.log.keys()]) if (lsn <= effects.trimLogThrough) this.log.delete(lsn);
    }
  }
}
