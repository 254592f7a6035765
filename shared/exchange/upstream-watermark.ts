/**
 * U_i's watermark for the exchange (issue 27): the event time below which it will deliver
 * no output any more. A delivered output's event time is at least its window's end − 1
 * (`route-outputs.ts`); the operator's watermark says every window ending at or before it
 * is closed, but a close spread over several steps (`shared/closing/`) has not emitted all
 * of the windows it is closing yet.
 */

/** What the watermark is derived from, all of U_i's applied (stable) state. */
export interface UpstreamClock {
  /** The operator's watermark (`Operator.watermarkMs`), ms; null before any record or tick. */
  watermarkMs: number | null;
  /** Whether results are due that a close limit held back (`LiveOperator.closing()`). */
  closing: boolean;
  /** While closing: the end of the earliest window with results still due, ms (null: not known). */
  firstDueEndMs: number | null;
}

/**
 * The watermark U_i may claim, ms, or null for no claim. Not closing: the operator's (a
 * later output's window ends after it, so its event time is at least it). Closing: just
 * below the earliest due window's end (its remaining results have that event time), or no
 * claim when the operator cannot say which window that is. Windows end on whole
 * milliseconds, so 1 ms below is enough.
 */
export function upstreamWatermark(clock: UpstreamClock): number | null {
  if (clock.watermarkMs === null) return null;
  if (!clock.closing) return clock.watermarkMs;
  return clock.firstDueEndMs === null ? null : Math.min(clock.watermarkMs, clock.firstDueEndMs - 1);
}
