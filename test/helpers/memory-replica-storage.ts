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
import { CheckpointSchema, type Checkpoint, type LogEntry, type ReplicaMeta } from "../../shared/wire/persisted.ts";
import { compareResults, isAfter, type WindowResult } from "../../shared/wire/window-result.ts";
import type { NumberedOutput } from "../../shared/wire/replica-rpc.ts";

/** Small chunks, so tests and the simulator copy several of them. */
const MEMORY_CHUNK_CHARS = 400;

export class MemoryReplicaStorage implements ReplicaStorage {
  meta: ReplicaMeta | null = null;
  readonly log = new Map<number, LogEntry>();
  checkpoint: string | null = null;
  outputs: NumberedOutput[] = [];
  readonly staged = new Map<string, string>();
  /** When set, the next `persist` throws before writing anything (a failed transaction). */
  failNextPersist = false;

  loadMeta(): ReplicaMeta | null {
    return this.meta ? structuredClone(this.meta) : null;
  }

  loadCheckpoint(): Checkpoint | null {
    return this.checkpoint === null ? null : CheckpointSchema.parse(JSON.parse(this.checkpoint));
  }

  checkpointChunkCount(): number {
    return this.checkpoint === null ? 0 : Math.ceil(this.checkpoint.length / MEMORY_CHUNK_CHARS);
  }

  readCheckpointChunk(index: number): string | null {
    if (this.checkpoint === null || index * MEMORY_CHUNK_CHARS >= this.checkpoint.length) return null;
    return this.checkpoint.slice(index * MEMORY_CHUNK_CHARS, (index + 1) * MEMORY_CHUNK_CHARS);
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

  readStagedSeed(snapshotId: string, chunks: number): { body: string } | { missing: number } {
    let body = "";
    for (let i = 0; i < chunks; i++) {
      const chunk = this.staged.get(`${snapshotId}#${i}`);
      if (chunk === undefined) return { missing: i };
      body += chunk;
    }
    return { body };
  }

  countOutputs(): number {
    return this.outputs.length;
  }

  installSeed(meta: ReplicaMeta, checkpointBody: string): void {
    this.persist(meta, { log: [], outputs: [], checkpoint: { lsn: meta.checkpointLsn, body: checkpointBody } });
    this.staged.clear();
  }

  wipe(): void {
    this.meta = null;
    this.log.clear();
    this.checkpoint = null;
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
    if (effects.checkpoint) this.checkpoint = effects.checkpoint.body;
    if (effects.trimLogThrough !== undefined) {
      for (const lsn of [...this.log.keys()]) if (lsn <= effects.trimLogThrough) this.log.delete(lsn);
    }
  }
}
