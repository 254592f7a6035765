/**
 * How long online recovery pauses after a copy step (issue 12): only while the partition
 * is taking writes, and then `pacing` times the step's time, so copying takes at most
 * 1 / (1 + pacing) of a thread it shares with ingest. A partition that took no writes for
 * a second is seeded at full speed: nothing waits behind its steps.
 */

/** The longest pause, ms: a slow step must not stall the recovery for long. */
const MAX_PAUSE_MS = 250;

/**
 * A survivor that logged nothing for this long takes no writes, ms. Not "since the previous
 * step": unpaced steps of a few ms each keep the writes in flight from reaching the log, so
 * the survivor looked idle and seeding ran on unpaced (measured: 589 ms of copying and 51 ms
 * of ingest in one second of a 1M-key seed); and a full GC pause (up to ~1 s measured on a
 * loaded machine) logs nothing while writes wait.
 */
export const QUIET_MS = 1_000;

/** What the pacer knows after one copy step. */
export interface SeedStep {
  /** Time the step took (every call since the previous pause), ms. */
  busyMs: number;
  /** Time since the survivor was last seen taking writes (0: now, or not known yet), ms. */
  quietMs: number;
}

/**
 * The pause after `step`, ms: 0 when no writes arrived for {@link QUIET_MS} or `pacing` is
 * 0; otherwise `pacing × busyMs`, at least 1 ms (so waiting requests get the thread) and at
 * most 250 ms.
 * @param pacing pause per unit of copying time (`FLUX_SEED_PACING`), ≥ 0.
 */
export function seedPauseMs(step: SeedStep, pacing: number): number {
  if (step.quietMs >= QUIET_MS || pacing <= 0) return 0;
  return Math.min(MAX_PAUSE_MS, Math.max(1, step.busyMs * pacing));
}

/**
 * Whether the survivor took writes between two copy steps, from the LSN it logged by each.
 * @param before the LSN at the previous step (null: none seen yet, counted as active).
 */
export function isIngestActive(before: number | null, now: number): boolean {
  return before === null || now > before;
}
