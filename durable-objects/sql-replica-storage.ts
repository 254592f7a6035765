/**
 * The only code that touches a partition replica's SQLite tables (`replica-layout.ts`).
 * Every step's writes go through `persist` in one synchronous transaction, so meta, log,
 * outputs and checkpoint never disagree after a crash. Meta parts and log rows are
 * `ReplicaMetaLog`'s and `ReplicaLog`'s (progress only when it must be stored, one log row per step).
 */
import type { LogEntry, ReplicaMeta } from "../shared/wire/persisted.ts";
import { WindowResultSchema, type WindowResult } from "../shared/wire/window-result.ts";
import type { ReplicaEffects } from "../shared/replica/replica-state.ts";
import type { ReplicaStorage } from "../shared/replica/replica-storage.ts";
import type { NumberedOutput } from "../shared/wire/replica-rpc.ts";
import type { ResultFilter } from "../shared/operators/operator.ts";
import { writeCheckpoint } from "./checkpoint-staging.ts";
import { CountedSql } from "../platform/counted-sql.ts";
import { consecutiveRuns, migrateFirstLayout, migrateLogGroups, outputsQuery, SCHEMA, TABLES } from "./replica-layout.ts";
import { ReplicaMetaLog } from "./replica-meta-log.ts";
import { ReplicaLog } from "./replica-log.ts";

/** SQLite stores at most 2 MB per value: 500k UTF-16 units are at most 1.5 MB of UTF-8. */
const CHECKPOINT_CHUNK_CHARS = 500_000;

/** The SQLite implementation of {@link ReplicaStorage}. */
export class SqlReplicaStorage implements ReplicaStorage {
  readonly #storage: DurableObjectStorage;
  readonly #sql: CountedSql;
  readonly #chunkChars: number;
  readonly #metaLog: ReplicaMetaLog;
  readonly #log: ReplicaLog;

  /** @param chunkChars largest checkpoint chunk, UTF-16 code units (smaller in tests). */
  constructor(storage: DurableObjectStorage, chunkChars = CHECKPOINT_CHUNK_CHARS) {
    this.#storage = storage;
    this.#chunkChars = chunkChars;
    this.#sql = new CountedSql(storage.sql);
    this.#metaLog = new ReplicaMetaLog(this.#sql);
    this.#log = new ReplicaLog(this.#sql);
    storage.sql.exec(SCHEMA);
    const transaction = (run: () => void) => storage.transactionSync(run);
    migrateLogGroups(this.#sql, transaction);
    migrateFirstLayout(this.#sql, transaction, (meta, log) => {
      this.#metaLog.writeMeta(this.#metaLog.planMeta(meta, { log: [], outputs: [] }));
      this.#log.writeRuns(consecutiveRuns(log));
    });
    this.#forget();
  }

  /** The stored meta (LSNs possibly behind the log: see `durableMeta`), or null for a replica never initialised. */
  loadMeta(): ReplicaMeta | null {
    this.#log.forget();
    return this.#metaLog.loadMeta();
  }

  loadCheckpointRows(lsn: number): string[] {
    return this.#sql.all<{ body: string }>("SELECT body FROM checkpoint WHERE lsn = ? ORDER BY chunk", lsn).map((row) => row.body);
  }

  checkpointChunkCount(lsn: number): number {
    return this.#sql.all<{ n: number }>("SELECT COUNT(*) AS n FROM checkpoint WHERE lsn = ?", lsn)[0]?.n ?? 0;
  }

  /** The stored checkpoint's chunks come first: staged rows are numbered after them (`stageCheckpoint`). */
  readCheckpointChunk(lsn: number, index: number): string | null {
    return this.#sql.all<{ body: string }>("SELECT body FROM checkpoint WHERE chunk = (SELECT MIN(chunk) FROM checkpoint) + ? AND lsn = ?", index, lsn)[0]?.body ?? null;
  }

  /** Log entries with `fromLsn ≤ lsn ≤ toLsn`, ascending. */
  readLog(fromLsn: number, toLsn: number): LogEntry[] {
    return this.#log.readLog(fromLsn, toLsn);
  }

  /** Closed window results matching the filter, in (window start, key) order. */
  readOutputs(filter: ResultFilter, sizeMs: number): WindowResult[] {
    const { query, args } = outputsQuery(filter, sizeMs);
    return this.#sql.all<{ body: string }>(query, ...args).map((row) => WindowResultSchema.parse(JSON.parse(row.body)));
  }

  readOutputPage(afterSeq: number, limit: number): NumberedOutput[] {
    return this.#sql.all<{ output_seq: number; body: string }>("SELECT output_seq, body FROM outputs WHERE output_seq > ? ORDER BY output_seq LIMIT ?", afterSeq, limit)
      .map((row) => ({ outputSeq: row.output_seq, result: WindowResultSchema.parse(JSON.parse(row.body)) }));
  }

  stageSeedChunk(snapshotId: string, index: number, body: string): void {
    this.#sql.run("INSERT OR REPLACE INTO seed_chunks (snapshot_id, idx, body) VALUES (?, ?, ?)", snapshotId, index, body);
  }

  stageOutputs(outputs: readonly NumberedOutput[]): void {
    this.#storage.transactionSync(() => this.#insertOutputs(outputs, "INSERT OR REPLACE"));
  }

  firstMissingSeedChunk(snapshotId: string, chunks: number): number | null {
    const rows = this.#sql.all<{ idx: number }>("SELECT idx FROM seed_chunks WHERE snapshot_id = ? AND idx < ? ORDER BY idx", snapshotId, chunks);
    for (let i = 0; i < chunks; i++) if (rows[i]?.idx !== i) return i;
    return null;
  }

  readStagedSeed(snapshotId: string, chunks: number): string[] {
    return this.#sql.all<{ body: string }>("SELECT body FROM seed_chunks WHERE snapshot_id = ? AND idx < ? ORDER BY idx", snapshotId, chunks).map((r) => r.body);
  }

  countOutputs(): number {
    return this.#sql.all<{ n: number }>("SELECT COUNT(*) AS n FROM outputs")[0]?.n ?? 0;
  }

  /** Moves the staged rows in SQL: the snapshot's text never passes through JavaScript again. */
  installSeed(meta: ReplicaMeta, snapshotId: string, chunks: number): void {
    this.#storage.transactionSync(() => {
      this.persist(meta, { log: [], outputs: [] });
      this.#sql.run("DELETE FROM checkpoint");
      const move = "INSERT INTO checkpoint (chunk, lsn, body) SELECT idx, ?, body FROM seed_chunks WHERE snapshot_id = ? AND idx < ?";
      this.#sql.run(move, meta.checkpointLsn, snapshotId, chunks);
      this.#sql.run("DELETE FROM seed_chunks");
    });
  }

  wipe(): void {
    this.#storage.transactionSync(() => {
      for (const table of TABLES) this.#sql.run(`DELETE FROM ${table}`);
    });
    this.#forget();
  }

  /**
   * Inserts outputs a chunk per statement: the rows travel as one JSON argument that SQLite
   * unpacks (`json_each`), since a statement per row cost most of a large window's close
   * (a 100k-key close: 6.0 s with one statement per row, 3.9 s in chunks). Each row's body
   * is its fourth item's JSON text (`->`), so a result is serialized once.
   */
  #insertOutputs(outputs: readonly NumberedOutput[], verb: "INSERT" | "INSERT OR REPLACE"): void {
    for (const chunk of outputChunks(outputs)) {
      this.#sql.run(
        `${verb} INTO outputs (output_seq, key, window_start, body) SELECT value ->> 0, value ->> 1, value ->> 2, value -> 3 FROM json_each(?)`,
        chunk,
      );
    }
  }

  /**
   * Writes the meta parts that must change and a step's effects atomically. A step that
   * stores one statement (the usual write or forward: its log row) needs no transaction
   * around it, as a statement is atomic by itself; one that stores nothing opens none.
   */
  persist(meta: ReplicaMeta, effects: ReplicaEffects): void {
    const plan = this.#metaLog.planMeta(meta, effects);
    const runs = consecutiveRuns(effects.log);
    const others = hasOtherWrites(effects) || this.#log.trimming();
    const statements = plan.parts.filter((p) => p.body !== null).length + runs.length;
    const write = () => {
      this.#metaLog.writeMeta(plan);
      this.#log.writeRuns(runs);
      if (!others) return;
      this.#insertOutputs(effects.outputs, "INSERT");
      writeCheckpoint(this.#sql, effects, meta.checkpointLsn, this.#chunkChars);
      if (effects.trimLogThrough !== undefined) this.#log.trimLog(effects.trimLogThrough);
      else this.#log.continueTrim();
    };
    try {
      if (!others && statements <= 1) write();
      else this.#storage.transactionSync(write);
    } catch (err) {
      // Rolled back: what is stored is no longer known, so the next write rewrites every part.
      this.#forget();
      throw err;
    }
  }

  #forget(): void {
    this.#metaLog.forget();
    this.#log.forget();
  }
}

/** Whether a step's effects store anything besides the meta and the log. */
function hasOtherWrites(effects: ReplicaEffects): boolean {
  return effects.outputs.length > 0 || effects.checkpoint !== undefined || effects.checkpointStage !== undefined || effects.trimLogThrough !== undefined;
}

/** Characters of one chunk's JSON at most: well under SQLite's 2 MB limit on one value. */
const OUTPUT_CHUNK_CHARS = 1_000_000;

/** The outputs as JSON arrays of `[outputSeq, key, windowStartMs, result]`, each within {@link OUTPUT_CHUNK_CHARS}. */
function outputChunks(outputs: readonly NumberedOutput[]): string[] {
  const chunks: string[] = [];
  let rows: string[] = [];
  let chars = 0;
  for (const { outputSeq, result } of outputs) {
    const row = JSON.stringify([outputSeq, result.key, result.windowStartMs, result]);
    if (rows.length > 0 && chars + row.length > OUTPUT_CHUNK_CHARS) {
      chunks.push(`[${rows.join(",")}]`);
      rows = [];
      chars = 0;
    }
    rows.push(row);
    chars += row.length + 1;
  }
  if (rows.length > 0) chunks.push(`[${rows.join(",")}]`);
  return chunks;
}
