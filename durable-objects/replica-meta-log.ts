/**
 * A replica's meta parts and log rows in SQLite (issue 12: rows are most of the cost).
 * A step writes one log row and rewrites a meta part only when `durableMeta`
 * (shared/replica/progress-durability.ts) says its stored form changed, with an UPDATE
 * (1 row written; INSERT OR REPLACE on the text key costs 2). A step's entries extend the
 * log row this object wrote last while it stays under `SEGMENT_CHARS` (an UPDATE: 1 row),
 * so a trim deletes one row per segment, not per step. Rows never overlap and are reached
 * by their primary key alone: the `last_lsn` index cost a row per write and per trim.
 */
import { LogGroupSchema, META_PARTS, ReplicaMetaSchema, type LogEntry, type MetaPart, type ReplicaMeta } from "../shared/wire/persisted.ts";
import type { ReplicaEffects } from "../shared/replica/replica-state.ts";
import { durableMeta } from "../shared/replica/progress-durability.ts";
import type { CountedSql } from "../platform/counted-sql.ts";
import { consecutiveRuns, partBody } from "./replica-layout.ts";

const PARTS = Object.keys(META_PARTS) as MetaPart[];

/** A log row grows by appends up to about this many characters (SQLite values stay far below 2 MB). */
const SEGMENT_CHARS = 64_000;

/**
 * Log rows one step deletes at most: the checkpoint of a large state can free thousands
 * (≈64k characters each), which in one step would stall the object; the rest go in the
 * next steps. Rows left behind by a restart are below the checkpoint, where no load reads.
 */
const TRIM_ROWS_PER_STEP = 64;

export class ReplicaMetaLog {
  readonly #sql: CountedSql;
  /** The meta as stored, and each part's stored row (null / empty: unknown, write every part). */
  #stored: ReplicaMeta | null = null;
  readonly #written = new Map<MetaPart, string>();
  /** Each part's field values when its row was last written: unchanged values (===) skip serializing it. */
  readonly #values = new Map<MetaPart, readonly unknown[]>();
  /** The log row this object wrote last, which later entries may extend (null: start a new row). */
  #open: { firstLsn: number; lastLsn: number; chars: number } | null = null;
  /** The trim still being carried out, a few rows per step (null: none). */
  #trimThrough: number | null = null;

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
      const values = META_PARTS[part].map((field) => durable[field]);
      const last = this.#values.get(part);
      if (last?.every((value, i) => value === values[i])) continue;
      this.#values.set(part, values);
      const body = partBody(durable, part);
      const old = this.#written.get(part);
      if (old === body) continue;
      if (old === undefined) this.#sql.run("INSERT OR REPLACE INTO meta_parts (part, body) VALUES (?, ?)", part, body);
      else this.#sql.run("UPDATE meta_parts SET body = ? WHERE part = ?", body, part);
      this.#written.set(part, body);
    }
    this.#stored = durable;
  }

  /** Each run of consecutive LSNs extends the open row when it follows it, else starts a row. */
  writeLog(entries: readonly LogEntry[]): void {
    for (const run of consecutiveRuns(entries)) {
      const first = run[0]?.lsn ?? 0;
      const last = first + run.length - 1;
      const items = run.map((e) => JSON.stringify([e.producer, e.seq, e.records])).join(",");
      const open = this.#open;
      if (open && open.lastLsn + 1 === first && open.chars + items.length <= SEGMENT_CHARS) {
        // The stored body ends in "]}": the new items go before it.
        const updated = this.#sql.all(
          "UPDATE log_groups SET last_lsn = ?, body = substr(body, 1, length(body) - 2) || ',' || ? || ']}' WHERE first_lsn = ? AND last_lsn = ? RETURNING first_lsn",
          last, items, open.firstLsn, open.lastLsn,
        );
        if (updated.length === 1) {
          this.#open = { firstLsn: open.firstLsn, lastLsn: last, chars: open.chars + items.length + 1 };
          continue;
        }
      }
      const body = `{"v":1,"entries":[${items}]}`;
      this.#sql.run("INSERT OR REPLACE INTO log_groups (first_lsn, last_lsn, body) VALUES (?, ?, ?)", first, last, body);
      this.#open = { firstLsn: first, lastLsn: last, chars: body.length };
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

  /**
   * Deletes whole rows at or behind `throughLsn` (a row holding an entry still needed
   * stays), at most `TRIM_ROWS_PER_STEP` now and the rest in the next calls of `continueTrim`.
   */
  trimLog(throughLsn: number): void {
    this.#trimThrough = Math.max(throughLsn, this.#trimThrough ?? 0);
    this.continueTrim();
  }

  /** Deletes the next few rows of a trim not finished yet (inside a step's transaction). */
  continueTrim(): void {
    const through = this.#trimThrough;
    if (through === null) return;
    const batch = "SELECT first_lsn FROM log_groups WHERE first_lsn <= ? AND last_lsn <= ? ORDER BY first_lsn LIMIT ?";
    const gone = this.#sql.all(`DELETE FROM log_groups WHERE first_lsn IN (${batch}) RETURNING first_lsn`, through, through, TRIM_ROWS_PER_STEP);
    if (gone.length < TRIM_ROWS_PER_STEP) this.#trimThrough = null;
    if (this.#open && this.#open.lastLsn <= through) this.#open = null;
  }

  /** What is stored is no longer known (a rolled-back transaction, a wipe): the next write rewrites every part. */
  forget(): void {
    this.#stored = null;
    this.#open = null;
    this.#trimThrough = null;
    this.#written.clear();
    this.#values.clear();
  }
}
