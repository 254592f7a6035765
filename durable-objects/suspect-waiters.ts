/**
 * Routers waiting for the monitor's verdict on a replica they reported as slow
 * (`Coordinator.reportSuspect`): settled after every monitor tick, or `undecided` once
 * the router's own call deadline has passed (no later verdict could help that call).
 */
import type { SuspectVerdict } from "../shared/wire/routing.ts";

interface Waiter {
  replica: string;
  reportedAtMs: number;
  resolve: (verdict: SuspectVerdict) => void;
  timer: ReturnType<typeof setTimeout>;
}

export class SuspectWaiters {
  readonly #waiting = new Set<Waiter>();

  /** Waits for a verdict on `replica`, at most `timeoutMs`. */
  wait(replica: string, reportedAtMs: number, timeoutMs: number): Promise<SuspectVerdict> {
    return new Promise((resolve) => {
      const waiter: Waiter = { replica, reportedAtMs, resolve, timer: setTimeout(() => this.#settle(waiter, "undecided"), timeoutMs) };
      this.#waiting.add(waiter);
    });
  }

  /** Settles every waiter `decide` has a verdict for. */
  settle(decide: (replica: string, reportedAtMs: number) => SuspectVerdict | null): void {
    for (const waiter of [...this.#waiting]) {
      const verdict = decide(waiter.replica, waiter.reportedAtMs);
      if (verdict) this.#settle(waiter, verdict);
    }
  }

  #settle(waiter: Waiter, verdict: SuspectVerdict): void {
    if (!this.#waiting.delete(waiter)) return;
    clearTimeout(waiter.timer);
    waiter.resolve(verdict);
  }
}
