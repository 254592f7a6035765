/**
 * Paces online recovery's copy calls (issue 12) with the rule in `seed-pause.ts`: after
 * each step that moves seed data (a snapshot chunk, a page of outputs, a page of log for
 * catch-up), a timer pause of `pacing` times the time since the last pause, while the
 * survivor takes writes. Locally the survivor, the fresh replica and the Worker share one
 * thread; on the platform the survivor serves its ingest on the thread that reads the
 * chunks. The pause is a timer, so the event loop also takes requests waiting on the
 * network: a chain of calls between objects in one process otherwise keeps them waiting.
 */
import { seedPauseMs } from "../shared/recovery-pacing/seed-pause.ts";

/** Pauses after copy steps; `pacing` is `FLUX_SEED_PACING`. */
export function seedPacer(pacing: number): (ingestActive: boolean) => Promise<void> {
  let resumedAtMs = Date.now();
  return async (ingestActive) => {
    const pauseMs = seedPauseMs({ busyMs: Date.now() - resumedAtMs, ingestActive }, pacing);
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    resumedAtMs = Date.now();
  };
}
