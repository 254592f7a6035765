/**
 * A replica's log rows in SQLite (issue 12: rows and CPU per event). A step writes its
 * entries as one new row text (`log-rows.ts`) into a row the log no longer needs (an
 * UPDATE: 1 row written) or a new row, never rewriting a row that grows: appending to a
 * long row rewrote all of it. A trim stores one trim point (1 row) that hides the rows
 * behind it and frees them for reuse. Rows never overlap; an in-memory directory of their
 * LSN ranges (read once per load) finds them, as an index would cost a row per write.
 */
import { z } from "zod";
import type { LogEntry } from "../shared/wire/persisted.ts";
import type { CountedSql } from "../platform/counted-sql.ts";
import { LOG_PART } from "./replica-layout.ts";
import { decodeLogRow, encodeLogRow } from "./log-rows.ts";

/** The stored trim point (the `LOG_PART` row of `meta_parts`): rows wholly at or behind it are gone. */
const LogTrimSchema = z.object({ v: z.literal(1), trimmedThrough: z.number().int().min(0) });

/**
 * Free rows kept for reuse: about one checkpoint interval's rows (a row per step; 512
 * batches by default), so a steady log neither inserts nor deletes. Beyond these, or
 * beyond {@link FREE_CHARS_KEPT} characters (after a seeding hold kept a long log), free
 * rows are deleted, at most {@link TRIM_ROWS_PER_STEP} per step so no step stalls.
 */
const FREE_ROWS_KEPT = 1_024;
const FREE_CHARS_KEPT = 16_000_000;
const TRIM_ROWS_PER_STEP = 64;
/** Rows read per query (a Durable Object's SQLite takes at most 100 bound parameters). */
const SLOTS_PER_READ = 100;

interface LogRow {
  firstLsn: number;
  lastLsn: number;
  chars: number;
}

/** The stored rows by slot, the free ones (trimmed, ready for reuse) and the trim point. */
interface LogDirectory {
  rows: Map<number, LogRow>;
  free: number[];
  freeChars: number;
  nextSlot: number;
  trimmedThrough: number;
  trimStored: boolean;
}

export class ReplicaLog {
  readonly #sql: CountedSql;
  /** The log rows as stored (null: not read since the last load or rollback). */
  #log: LogDirectory | null = null;

  constructor(sql: CountedSql) {
    this.#sql = sql;
  }

  /** Each run of consecutive LSNs (`consecutiveRuns`) goes in one row: a free row rewritten (1 row written), else a new one. */
  writeRuns(runs: readonly (readonly LogEntry[])[]): void {
    if (runs.length === 0) return;
    const log = this.#directory();
    for (const run of runs) {
      const firstLsn = run[0]?.lsn ?? 0;
      const body = encodeLogRow(run);
      const row: LogRow = { firstLsn, lastLsn: firstLsn + run.length - 1, chars: body.length };
      const free = log.free.pop();
      if (free === undefined) {
        const slot = log.nextSlot++;
        this.#sql.run("INSERT INTO log_slots (slot, first_lsn, last_lsn, chars, body) VALUES (?, ?, ?, ?, ?)", slot, row.firstLsn, row.lastLsn, row.chars, body);
        log.rows.set(slot, row);
      } else {
        this.#sql.run("UPDATE log_slots SET first_lsn = ?, last_lsn = ?, chars = ?, body = ? WHERE slot = ?", row.firstLsn, row.lastLsn, row.chars, body, free);
        log.freeChars -= log.rows.get(free)?.chars ?? 0;
        log.rows.set(free, row);
      }
    }
  }

  /**
   * Log entries with `fromLsn ≤ lsn ≤ toLsn`, ascending, from the rows not trimmed (rows
   * never overlap). The directory names the rows, so only they are read, by key.
   */
  readLog(fromLsn: number, toLsn: number): LogEntry[] {
    const log = this.#directory();
    const slots = [...log.rows]
      .filter(([, row]) => row.lastLsn > log.trimmedThrough && row.lastLsn >= fromLsn && row.firstLsn <= toLsn)
      .sort(([, a], [, b]) => a.firstLsn - b.firstLsn)
      .map(([slot]) => slot);
    const entries: LogEntry[] = [];
    for (let i = 0; i < slots.length; i += SLOTS_PER_READ) {
      const some = slots.slice(i, i + SLOTS_PER_READ);
      const query = `SELECT first_lsn, body FROM log_slots WHERE slot IN (${some.map(() => "?").join(", ")}) ORDER BY first_lsn`;
      for (const row of this.#sql.all<{ first_lsn: number; body: string }>(query, ...some)) {
        for (const entry of decodeLogRow(row.first_lsn, row.body)) if (entry.lsn >= fromLsn && entry.lsn <= toLsn) entries.push(entry);
      }
    }
    return entries;
  }

  /**
   * Drops whole rows at or behind `throughLsn` (a row holding an entry still needed stays):
   * one stored trim point makes them invisible and free for reuse, so the trim itself costs
   * one row; free rows beyond what the log needs again are deleted a few per step.
   */
  trimLog(throughLsn: number): void {
    const log = this.#directory();
    if (throughLsn <= log.trimmedThrough) return this.continueTrim();
    const body = JSON.stringify({ v: 1, trimmedThrough: throughLsn });
    if (log.trimStored) this.#sql.run("UPDATE meta_parts SET body = ? WHERE part = ?", body, LOG_PART);
    else this.#sql.run("INSERT OR REPLACE INTO meta_parts (part, body) VALUES (?, ?)", LOG_PART, body);
    log.trimStored = true;
    for (const [slot, row] of log.rows) {
      if (row.lastLsn > log.trimmedThrough && row.lastLsn <= throughLsn) {
        log.free.push(slot);
        log.freeChars += row.chars;
      }
    }
    log.trimmedThrough = throughLsn;
    this.continueTrim();
  }

  /** Whether free rows beyond what is kept are still to be deleted (the next steps' {@link continueTrim}). */
  trimming(): boolean {
    const log = this.#log;
    return log !== null && (log.free.length > FREE_ROWS_KEPT || log.freeChars > FREE_CHARS_KEPT);
  }

  /** Deletes the next few free rows beyond {@link FREE_ROWS_KEPT} and {@link FREE_CHARS_KEPT} (inside a step's transaction). */
  continueTrim(): void {
    const log = this.#log;
    if (!log) return;
    for (let n = 0; n < TRIM_ROWS_PER_STEP && this.trimming(); n++) {
      const slot = log.free.shift();
      if (slot === undefined) break;
      this.#sql.run("DELETE FROM log_slots WHERE slot = ?", slot);
      log.freeChars -= log.rows.get(slot)?.chars ?? 0;
      log.rows.delete(slot);
    }
  }

  /** The log rows as stored (read once per load: a scan of the small table, no bodies). */
  #directory(): LogDirectory {
    if (this.#log) return this.#log;
    const trim = this.#sql.all<{ body: string }>("SELECT body FROM meta_parts WHERE part = ?", LOG_PART)[0];
    const trimmedThrough = trim ? LogTrimSchema.parse(JSON.parse(trim.body)).trimmedThrough : 0;
    const log: LogDirectory = { rows: new Map(), free: [], freeChars: 0, nextSlot: 1, trimmedThrough, trimStored: trim !== undefined };
    const rows = this.#sql.all<{ slot: number; first_lsn: number; last_lsn: number; chars: number }>("SELECT slot, first_lsn, last_lsn, chars FROM log_slots");
    for (const r of rows) {
      log.rows.set(r.slot, { firstLsn: r.first_lsn, lastLsn: r.last_lsn, chars: r.chars });
      log.nextSlot = Math.max(log.nextSlot, r.slot + 1);
      if (r.last_lsn <= trimmedThrough) {
        log.free.push(r.slot);
        log.freeChars += r.chars;
      }
    }
    return (this.#log = log);
  }

  /** What is stored is no longer known (a load, a rolled-back transaction, a wipe): read it again on next use. */
  forget(): void {
    this.#log = null;
  }
}
