/**
 * How long online recovery pauses after a copy step (issue 12): while the partition is
 * taking writes, `pacing` times the step's time, so copying takes at most 1 / (1 + pacing)
 * of a thread it shares with ingest. A partition that takes no writes is seeded at nearly
 * full speed: a timer of 1 ms after each step.
 */

/** The longest pause, ms: a slow step must not stall the recovery for long. */
const MAX_PAUSE_MS = 250;

/**
 * The pause after a step that saw no new writes, ms. Not 0: steps with no timer between
 * them keep writes in flight from reaching the log (a chain of calls between objects holds
 * the thread), so a busy survivor looked idle and seeding ran on unpaced (measured: 589 ms
 * of copying and 51 ms of ingest in one second of a 1M-key seed). A timer lets them
 * through, and the next step sees them.
 */
const IDLE_PAUSE_MS = 1;

/** What the pacer knows after one copy step. */
export interface SeedStep {
  /** Time the step took (every call since the previous pause), ms. */
  busyMs: number;
  /** Whether the survivor logged writes since the previous step (true when unknown). */
  ingestActive: boolean;
}

/**
 * The pause after `step`, ms: 0 when `pacing` is 0; 1 ms when no writes arrived since the
 * previous step; otherwise `pacing × busyMs`, at least 1 ms (so waiting requests get the
 * thread) and at most 250 ms.
 * @param pacing pause per unit of copying time (`FLUX_SEED_PACING`), ≥ 0.
 */
export function seedPauseMs(step: SeedStep, pacing: number): number {
  if (pacing <= 0) return 0;
  if (!step.ingestActive) return IDLE_PAUSE_MS;
  return Math.min(MAX_PAUSE_MS, Math.max(1, step.busyMs * pacing));
}

/**
 * Whether the survivor took writes between two copy steps, from the LSN it logged by each.
 * @param before the LSN at the previous step (null: none seen yet, counted as active).
 */
export function isIngestActive(before: number | null, now: number): boolean {
  return before === null || now > before;
}
