/**
 * Clock ticks (issue 6): for dataflows with `idleAdvanceMs`, the monitor appends a tick to
 * every partition's log each heartbeat, through the primary like any batch, so both
 * replicas see the same ticks at the same LSNs and close the same windows. A tick is a
 * log entry of the reserved producer `$tick` whose seq is the monitor's wall-clock time;
 * dedup drops a tick from a clock that went backwards.
 */
import type { LogEntry } from "../wire/persisted.ts";

/** The producer id of clock ticks; client producer ids cannot contain `$`. */
export const TICK_PRODUCER = "$tick";

/** A tick's records: none. */
export const TICK_RECORDS = "[]";

/** The event time a tick entry vouches for, or null if the entry is not a tick. */
export function tickTimeOf(entry: Pick<LogEntry, "producer" | "seq">, idleAdvanceMs: number | undefined): number | null {
  return entry.producer === TICK_PRODUCER ? entry.seq - (idleAdvanceMs ?? 0) : null;
}
