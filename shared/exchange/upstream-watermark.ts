/**
 * U_i's watermark for the exchange (issue 27): the event time below which it will emit no
 * output any more. An output's event time is its window's end; the operator closes every
 * window ending at or before (event time − allowed lateness), but a close spread over
 * several steps (`shared/closing/`) has not passed the end of the window it is closing.
 */

/** What the watermark is derived from, all of U_i's applied (stable) state. */
export interface UpstreamClock {
  /** The operator's event time (max record time or tick), ms; null before any. */
  eventTimeMs: number | null;
  allowedLatenessMs: number;
  /** Whether results are due that a close limit held back (`LiveOperator.closing()`). */
  closing: boolean;
  /** While closing: the end of the earliest window with results still due, ms (null: not known). */
  firstDueEndMs: number | null;
}

/**
 * The watermark U_i may claim, ms, or null for no claim. Not closing: `eventTimeMs −
 * allowedLatenessMs` (every window ending there is out; a later record lands only in a
 * window ending after it). Closing: just below the earliest due window's end (its
 * remaining results have that event time), or no claim when the operator cannot say
 * which window that is. Windows end on whole milliseconds, so 1 ms below is enough.
 */
export function upstreamWatermark(clock: UpstreamClock): number | null {
  if (clock.eventTimeMs === null) return null;
  if (!clock.closing) return clock.eventTimeMs - clock.allowedLatenessMs;
  return clock.firstDueEndMs === null ? null : clock.firstDueEndMs - 1;
}
