/**
 * The replica's SQLite tables (issue 12): meta in parts (`meta_parts`, see `META_PARTS`,
 * plus the log's trim point), log rows reused by slot (`log_slots`, see `replica-log.ts`),
 * checkpoint chunks, outputs and staged seed chunks; and the migrations run once when an
 * object of an older deploy is loaded: from the first layout (one `meta` row rewritten per
 * step, one `log` row per entry) and from the second one's `log_groups` (rows keyed by
 * their first LSN, extended in place).
 */
import { LogEntrySchema, META_PARTS, ReplicaMetaSchema, type LogEntry, type MetaPart, type ReplicaMeta } from "../shared/wire/persisted.ts";
import type { CountedSql } from "../platform/counted-sql.ts";
import type { ResultFilter } from "../shared/operators/operator.ts";

export const SCHEMA = `
  CREATE TABLE IF NOT EXISTS meta_parts (part TEXT PRIMARY KEY, body TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS log_slots (slot INTEGER PRIMARY KEY, first_lsn INTEGER NOT NULL, last_lsn INTEGER NOT NULL, chars INTEGER NOT NULL, body TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS checkpoint (chunk INTEGER PRIMARY KEY, lsn INTEGER NOT NULL, body TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS outputs (output_seq INTEGER PRIMARY KEY, key TEXT NOT NULL, window_start INTEGER NOT NULL, body TEXT NOT NULL);
  CREATE INDEX IF NOT EXISTS outputs_by_key ON outputs (key, window_start);
  CREATE TABLE IF NOT EXISTS seed_chunks (snapshot_id TEXT NOT NULL, idx INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (snapshot_id, idx));
`;

/** Every table `wipe` empties. */
export const TABLES = ["meta_parts", "log_slots", "checkpoint", "outputs", "seed_chunks"] as const;

/** The `meta_parts` row that holds the log's trim point (not a part of the meta). */
export const LOG_PART = "log";

/** The serialized row of one meta part. */
export function partBody(meta: ReplicaMeta, part: MetaPart): string {
  const fields: Record<string, unknown> = { v: 1 };
  for (const field of META_PARTS[part]) fields[field] = meta[field];
  return JSON.stringify(fields);
}

/** Splits entries into runs of consecutive LSNs, one log row each (usually one run: the entries themselves). */
export function consecutiveRuns(entries: readonly LogEntry[]): (readonly LogEntry[])[] {
  const runs: LogEntry[][] = [];
  let start = 0;
  for (let i = 1; i <= entries.length; i++) {
    if (i < entries.length && entries[i]?.lsn === (entries[i - 1]?.lsn ?? 0) + 1) continue;
    if (start === 0 && i === entries.length) return [entries];
    runs.push(entries.slice(start, i));
    start = i;
  }
  return runs;
}

/**
 * Moves the log rows of the second layout (`log_groups`: rows of the first form, never
 * overlapping, already trimmed by deletion) into slots, in one transaction.
 */
export function migrateLogGroups(sql: CountedSql, transaction: (run: () => void) => void): void {
  if (sql.all("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'log_groups'").length === 0) return;
  transaction(() => {
    sql.run("INSERT INTO log_slots (slot, first_lsn, last_lsn, chars, body) SELECT first_lsn, first_lsn, last_lsn, length(body), body FROM log_groups");
    sql.run("DROP TABLE log_groups");
  });
}

/**
 * Moves a replica stored in the first layout into this one, in one transaction: its meta
 * row becomes the three parts and each old log row a log row of one entry.
 * @param write writes meta and log entries in the new layout.
 */
export function migrateFirstLayout(sql: CountedSql, transaction: (run: () => void) => void, write: (meta: ReplicaMeta, log: LogEntry[]) => void): void {
  const old = sql.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('meta', 'log')");
  if (old.length === 0) return;
  transaction(() => {
    const row = old.some((t) => t.name === "meta") ? sql.all<{ body: string }>("SELECT body FROM meta WHERE id = 1")[0] : undefined;
    if (row) {
      const meta = ReplicaMetaSchema.parse(JSON.parse(row.body));
      const log = old.some((t) => t.name === "log")
        ? sql.all("SELECT lsn, producer, seq, records FROM log ORDER BY lsn").map((r) => LogEntrySchema.parse(r))
        : [];
      write(meta, log);
    }
    sql.run("DROP TABLE IF EXISTS meta");
    sql.run("DROP TABLE IF EXISTS log");
  });
}

/** The query for closed results matching `filter` (windows of `sizeMs`), in (window start, key) order. */
export function outputsQuery(filter: ResultFilter, sizeMs: number): { query: string; args: (string | number)[] } {
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
  return { query: `SELECT body FROM outputs ${where} ORDER BY window_start, key LIMIT ?`, args };
}
