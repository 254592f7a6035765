/**
 * A replica's meta parts and log rows in SQLite (issue 12: rows are most of the cost).
 * A step writes one log row for what it logged and rewrites a meta part only when
 * `durableMeta` (shared/replica/progress-durability.ts) says its stored form changed, with
 * an UPDATE (1 row written; INSERT OR REPLACE on the text key costs 2). Log rows are
 * reached by their primary key alone: the `last_lsn` index cost a row per write and trim.
 */
import { LogGroupSchema, META_PARTS, ReplicaMetaSchema, type LogEntry, type MetaPart, type ReplicaMeta } from "../shared/wire/persisted.ts";
import type { ReplicaEffects } from "../shared/replica/replica-state.ts";
import { durableMeta } from "../shared/replica/progress-durability.ts";
import type { CountedSql } from "../platform/counted-sql.ts";
import { consecutiveRuns, partBody } from "./replica-layout.ts";

const PARTS = Object.keys(META_PARTS) as MetaPart[];

export class ReplicaMetaLog {
  readonly #sql: CountedSql;
  /** The meta as stored, and each part's stored row (null / empty: unknown, write every part). */
  #stored: ReplicaMeta | null = null;
  readonly #written = new Map<MetaPart, string>();

  constructor(sql: CountedSql) {
    this.#sql = sql;
  }

  /** The stored meta (its LSNs possibly behind: see `durableMeta`), or null for a replica never initialised. */
  loadMeta(): ReplicaMeta | null {
    this.forget();
    const rows = this.#sql.all<{ part: string; body: string }>("SELECT part, body FROM meta_parts");
    if (rows.length === 0) return null;
    const merged: Record<string, unknown> = {};
    for (const row of rows) Object.assign(merged, JSON.parse(row.body));
    const meta = ReplicaMetaSchema.parse(merged);
    for (const row of rows) if (PARTS.includes(row.part as MetaPart)) this.#written.set(row.part as MetaPart, row.body);
    this.#stored = { ...meta };
    return meta;
  }

  /** Writes the meta parts a step changed in storage's terms (inside the step's transaction). */
  writeMeta(meta: ReplicaMeta, effects: ReplicaEffects): void {
    const durable = durableMeta(this.#stored, meta, effects);
    for (const part of PARTS) {
      const body = partBody(durable, part);
      const old = this.#written.get(part);
      if (old === body) continue;
      if (old === undefined) this.#sql.run("INSERT OR REPLACE INTO meta_parts (part, body) VALUES (?, ?)", part, body);
      else this.#sql.run("UPDATE meta_parts SET body = ? WHERE part = ?", body, part);
      this.#written.set(part, body);
    }
    this.#stored = durable;
  }

  /** One row per run of consecutive LSNs. */
  writeLog(entries: readonly LogEntry[]): void {
    for (const run of consecutiveRuns(entries)) {
      const first = run[0]?.lsn ?? 0;
      const body = JSON.stringify({ v: 1, entries: run.map((e) => [e.producer, e.seq, e.records]) });
      this.#sql.run("INSERT OR REPLACE INTO log_groups (first_lsn, last_lsn, body) VALUES (?, ?, ?)", first, first + run.length - 1, body);
    }
  }

  /** Log entries with `fromLsn ≤ lsn ≤ toLsn`, ascending: from the row holding `fromLsn` (rows never overlap). */
  readLog(fromLsn: number, toLsn: number): LogEntry[] {
    const rows = this.#sql.all<{ first_lsn: number; body: string }>(
      `SELECT first_lsn, body FROM log_groups
       WHERE first_lsn >= COALESCE((SELECT MAX(first_lsn) FROM log_groups WHERE first_lsn <= ?), 0) AND first_lsn <= ?
       ORDER BY first_lsn`,
      fromLsn,
      toLsn,
    );
    return rows.flatMap((row) =>
      LogGroupSchema.parse(JSON.parse(row.body))
        .entries.map(([producer, seq, records], i) => ({ lsn: row.first_lsn + i, producer, seq, records }))
        .filter((e) => e.lsn >= fromLsn && e.lsn <= toLsn),
    );
  }

  /** Deletes whole rows at or behind `throughLsn`, so a row holding an entry still needed stays. */
  trimLog(throughLsn: number): void {
    this.#sql.run("DELETE FROM log_groups WHERE first_lsn <= ? AND last_lsn <= ?", throughLsn, throughLsn);
  }

  /** What is stored is no longer known (a rolled-back transaction, a wipe): the next write rewrites every part. */
  forget(): void {
    this.#stored = null;
    this.#written.clear();
  }
}
