/**
 * SQLite layout of a partition replica and the only code that touches it. Every step's
 * writes go through `persist` in one synchronous transaction, so meta, log, outputs and
 * checkpoint never disagree after a crash.
 */
import { CheckpointSchema, LogEntrySchema, ReplicaMetaSchema, type LogEntry, type ReplicaMeta, type Checkpoint } from "../shared/wire/persisted.ts";
import { WindowResultSchema, type WindowResult } from "../shared/wire/window-result.ts";
import type { ReplicaEffects } from "../shared/replica/replica-state.ts";
import type { ReplicaStorage } from "../shared/replica/replica-storage.ts";
import type { NumberedOutput } from "../shared/wire/replica-rpc.ts";
import type { ResultFilter } from "../shared/operators/operator.ts";
import { chunkText } from "../shared/replica/chunk-text.ts";
import { CountedSql } from "../platform/counted-sql.ts";

/** SQLite stores at most 2 MB per value: 500k UTF-16 units are at most 1.5 MB of UTF-8. */
const CHECKPOINT_CHUNK_CHARS = 500_000;

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS meta (id INTEGER PRIMARY KEY CHECK (id = 1), body TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS log (lsn INTEGER PRIMARY KEY, producer TEXT NOT NULL, seq INTEGER NOT NULL, records TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS checkpoint (chunk INTEGER PRIMARY KEY, lsn INTEGER NOT NULL, body TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS outputs (output_seq INTEGER PRIMARY KEY, key TEXT NOT NULL, window_start INTEGER NOT NULL, body TEXT NOT NULL);
  CREATE INDEX IF NOT EXISTS outputs_by_key ON outputs (key, window_start);
  CREATE TABLE IF NOT EXISTS seed_chunks (snapshot_id TEXT NOT NULL, idx INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (snapshot_id, idx));
`;

/** The SQLite implementation of {@link ReplicaStorage}. */
export class SqlReplicaStorage implements ReplicaStorage {
  readonly #storage: DurableObjectStorage;
  readonly #sql: CountedSql;
  readonly #chunkChars: number;

  /** @param chunkChars largest checkpoint chunk, UTF-16 code units (smaller in tests). */
  constructor(storage: DurableObjectStorage, chunkChars = CHECKPOINT_CHUNK_CHARS) {
    this.#storage = storage;
    this.#chunkChars = chunkChars;
    this.#sql = new CountedSql(storage.sql);
    storage.sql.exec(SCHEMA);
  }

  /** The stored meta, or null for a replica never initialised. */
  loadMeta(): ReplicaMeta | null {
    const row = this.#sql.all<{ body: string }>("SELECT body FROM meta WHERE id = 1")[0];
    return row ? ReplicaMetaSchema.parse(JSON.parse(row.body)) : null;
  }

  /** The newest checkpoint, reassembled from its chunks, or null. */
  loadCheckpoint(): Checkpoint | null {
    const chunks = this.#sql.all<{ body: string }>("SELECT body FROM checkpoint ORDER BY chunk");
    if (chunks.length === 0) return null;
    return CheckpointSchema.parse(JSON.parse(chunks.map((c) => c.body).join("")));
  }

  checkpointChunkCount(): number {
    return this.#sql.all<{ n: number }>("SELECT COUNT(*) AS n FROM checkpoint")[0]?.n ?? 0;
  }

  readCheckpointChunk(index: number): string | null {
    return this.#sql.all<{ body: string }>("SELECT body FROM checkpoint WHERE chunk = ?", index)[0]?.body ?? null;
  }

  /** Log entries with `fromLsn ≤ lsn ≤ toLsn`, ascending. */
  readLog(fromLsn: number, toLsn: number): LogEntry[] {
    return this.#sql.all("SELECT lsn, producer, seq, records FROM log WHERE lsn >= ? AND lsn <= ? ORDER BY lsn", fromLsn, toLsn)
      .map((row) => LogEntrySchema.parse(row));
  }

  /** Closed window results matching the filter, in (window start, key) order. */
  readOutputs(filter: ResultFilter, sizeMs: number): WindowResult[] {
    const clauses: string[] = [];
    const args: (string | number)[] = [];
    if (filter.key !== undefined) {
      clauses.push("key = ?");
      args.push(filter.key);
    }
    if (filter.fromMs !== undefined) {
      clauses.push("window_start > ?");
      args.push(filter.fromMs - sizeMs);
    }
    if (filter.toMs !== undefined) {
      clauses.push("window_start < ?");
      args.push(filter.toMs);
    }
    if (filter.after !== undefined) {
      clauses.push("(window_start > ? OR (window_start = ? AND key > ?))");
      args.push(filter.after.windowStartMs, filter.after.windowStartMs, filter.after.key);
    }
    const where = clauses.length > 0 ? `WHERE ${clauses.join(" AND ")}` : "";
    // -1 is SQLite's "no limit".
    args.push(filter.limit ?? -1);
    return this.#sql.all<{ body: string }>(`SELECT body FROM outputs ${where} ORDER BY window_start, key LIMIT ?`, ...args)
      .map((row) => WindowResultSchema.parse(JSON.parse(row.body)));
  }

  readOutputPage(afterSeq: number, limit: number): NumberedOutput[] {
    return this.#sql.all<{ output_seq: number; body: string }>("SELECT output_seq, body FROM outputs WHERE output_seq > ? ORDER BY output_seq LIMIT ?", afterSeq, limit)
      .map((row) => ({ outputSeq: row.output_seq, result: WindowResultSchema.parse(JSON.parse(row.body)) }));
  }

  stageSeedChunk(snapshotId: string, index: number, body: string): void {
    this.#sql.run("INSERT OR REPLACE INTO seed_chunks (snapshot_id, idx, body) VALUES (?, ?, ?)", snapshotId, index, body);
  }

  stageOutputs(outputs: readonly NumberedOutput[]): void {
    this.#storage.transactionSync(() => {
      for (const o of outputs) this.#insertOutput(o, "INSERT OR REPLACE");
    });
  }

  readStagedSeed(snapshotId: string, chunks: number): { body: string } | { missing: number } {
    const rows = this.#sql.all<{ idx: number; body: string }>("SELECT idx, body FROM seed_chunks WHERE snapshot_id = ? ORDER BY idx", snapshotId);
    for (let i = 0; i < chunks; i++) if (rows[i]?.idx !== i) return { missing: i };
    return { body: rows.slice(0, chunks).map((r) => r.body).join("") };
  }

  countOutputs(): number {
    return this.#sql.all<{ n: number }>("SELECT COUNT(*) AS n FROM outputs")[0]?.n ?? 0;
  }

  installSeed(meta: ReplicaMeta, checkpointBody: string): void {
    this.#storage.transactionSync(() => {
      this.persist(meta, { log: [], outputs: [], checkpoint: { lsn: meta.checkpointLsn, body: checkpointBody } });
      this.#sql.run("DELETE FROM seed_chunks");
    });
  }

  wipe(): void {
    this.#storage.transactionSync(() => {
      for (const table of ["meta", "log", "checkpoint", "outputs", "seed_chunks"]) this.#sql.run(`DELETE FROM ${table}`);
    });
  }

  #insertOutput({ outputSeq, result }: NumberedOutput, verb: "INSERT" | "INSERT OR REPLACE"): void {
    this.#sql.all(
      `${verb} INTO outputs (output_seq, key, window_start, body) VALUES (?, ?, ?, ?)`,
      outputSeq,
      result.key,
      result.windowStartMs,
      JSON.stringify(result),
    );
  }

  /** Writes meta and a step's effects atomically. */
  persist(meta: ReplicaMeta, effects: ReplicaEffects): void {
    const sql = this.#sql;
    this.#storage.transactionSync(() => {
      sql.run("INSERT OR REPLACE INTO meta (id, body) VALUES (1, ?)", JSON.stringify(meta));
      for (const e of effects.log) {
        sql.run("INSERT OR REPLACE INTO log (lsn, producer, seq, records) VALUES (?, ?, ?, ?)", e.lsn, e.producer, e.seq, e.records);
      }
      for (const output of effects.outputs) this.#insertOutput(output, "INSERT");
      if (effects.checkpoint) {
        const { lsn, body } = effects.checkpoint;
        sql.run("DELETE FROM checkpoint");
        chunkText(body, this.#chunkChars).forEach((chunk, i) => sql.run("INSERT INTO checkpoint (chunk, lsn, body) VALUES (?, ?, ?)", i, lsn, chunk));
      }
      if (effects.trimLogThrough !== undefined) sql.run("DELETE FROM log WHERE lsn <= ?", effects.trimLogThrough);
    });
  }
}
