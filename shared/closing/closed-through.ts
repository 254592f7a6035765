/**
 * How far a close spread over several steps has gone (issue 12), as checkpoints hold it:
 * `closedThrough: { windowStartMs, key }` beside event time in the head (or the whole
 * snapshot). Written only while a close is pending, so every other checkpoint is exactly
 * as before, and one without it (any earlier deploy's) restores with no close under way.
 */
import type { ResultPosition } from "../wire/window-result.ts";

/** The head or snapshot fields for `closedThrough` (none when null). */
export function closedThroughField(closedThrough: ResultPosition | null): { closedThrough?: ResultPosition } {
  return closedThrough === null ? {} : { closedThrough: { windowStartMs: closedThrough.windowStartMs, key: closedThrough.key } };
}

/** `closedThrough` of a checkpoint head or snapshot; absent: null. Throws if it is malformed. */
export function closedThroughOf(value: Readonly<Record<string, unknown>>): ResultPosition | null {
  const at = value.closedThrough;
  if (at === undefined) return null;
  const p = (typeof at === "object" && at !== null ? at : {}) as Record<string, unknown>;
  if (typeof p.windowStartMs !== "number" || !Number.isFinite(p.windowStartMs) || typeof p.key !== "string") throw new Error("checkpoint: malformed closedThrough");
  return { windowStartMs: p.windowStartMs, key: p.key };
}
