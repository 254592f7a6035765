/**
 * Paces online recovery's copy calls (issue 12). Each call that moves seed data (a
 * snapshot chunk, a page of outputs, a page of log for catch-up) is followed by a pause of
 * `PAUSE_FACTOR` times the time the monitor spent since the last pause, so copying takes
 * about 1 / (1 + PAUSE_FACTOR) of the time: locally the survivor, the fresh replica and
 * the Worker share one thread, and on the platform the survivor serves its ingest on the
 * thread that reads the chunks. The pause is a timer, so the event loop also takes
 * requests waiting on the network: a chain of calls between objects in one process
 * otherwise keeps them waiting until it ends.
 */

/** Pause per unit of copying time: copying takes at most ~29% of the thread. */
const PAUSE_FACTOR = 2.5;
/** The longest pause, ms: a slow step must not stall the recovery for long. */
const MAX_PAUSE_MS = 250;

/** Runs copy calls with pauses between them. */
export function seedPacer(): <T>(run: () => Promise<T>) => Promise<T> {
  let resumedAtMs = Date.now();
  return async (run) => {
    const result = await run();
    const busyMs = Date.now() - resumedAtMs;
    await new Promise((resolve) => setTimeout(resolve, Math.min(MAX_PAUSE_MS, Math.max(1, busyMs * PAUSE_FACTOR))));
    resumedAtMs = Date.now();
    return result;
  };
}
