/** The producer id of clock ticks; client producer ids cannot contain `$`. */
export const TICK_PRODUCER = "$tick";
/** A tick's records: none. */
export const TICK_RECORDS = "[]";
/** The event time a tick entry vouches for, or null if the entry is not a tick. */
export function tickTimeOf(entry, idleAdvanceMs) {
    return entry.producer === TICK_PRODUCER ? entry.seq - (idleAdvanceMs ?? 0) : null;
}
