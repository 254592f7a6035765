/**
 * Per-isolate coalescing of slow-call reports (`slow-call-report.ts`): concurrent requests
 * that find the same replica slow share one `reportSuspect` call to the monitor of the replica's dataflow and its
 * verdict, so a busy replica under heavy load costs that monitor one call per
 * isolate at a time, not one per request. Bounds: one entry per replica with a report in
 * flight, removed when its verdict arrives; nothing in it must survive the isolate.
 */
import type { SuspectVerdict } from "../shared/wire/routing.ts";

export class SuspectReports {
  readonly #inFlight = new Map<string, Promise<SuspectVerdict>>();

  /** The verdict on `replica`: the one already asked for, or `ask()`'s. */
  verdict(replica: string, ask: () => Promise<SuspectVerdict>): Promise<SuspectVerdict> {
    let verdict = this.#inFlight.get(replica);
    if (!verdict) {
      verdict = ask().finally(() => this.#inFlight.delete(replica));
      this.#inFlight.set(replica, verdict);
    }
    return verdict;
  }
}
