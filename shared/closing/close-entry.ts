/**
 * The close entry (issue 12): a log entry with no records that a primary logs itself
 * while a large window's close is spread over steps, so the close goes on without new
 * traffic. It replicates and applies like any entry (both replicas close the same
 * results at the same LSN), but it is no producer's batch: dedup does not record it and
 * nobody is answered for it.
 */
import type { LogEntry } from "../wire/persisted.ts";

/** The producer id of close entries; client producer ids cannot contain `$`. */
const CLOSE_PRODUCER = "$close";

/**
 * (window, key) results one log entry may close at most: at 1M keys a step stays well under
 * the 250 ms probe timeout (bench/report-close.md). Both replicas of a partition must use the
 * same value (it decides which results each entry numbers), and a rolling deploy runs old
 * and new code side by side: before changing it, carry it in the dataflow's record and each
 * replica's meta, so a running dataflow keeps the value it started with.
 */
export const CLOSE_KEYS_PER_STEP = 5_000;

/** Whether `entry` is a close entry. */
export function isCloseEntry(entry: Pick<LogEntry, "producer">): boolean {
  return entry.producer === CLOSE_PRODUCER;
}

/** The close entry to log at `lsn`, without its LSN (its seq is its LSN: unique, and never judged by dedup). */
export function closeEntryAt(lsn: number): Omit<LogEntry, "lsn"> {
  return { producer: CLOSE_PRODUCER, seq: lsn, records: "[]" };
}
