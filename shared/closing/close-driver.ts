/**
 * Drives a spread close on a primary (issue 12): while its operator holds results back,
 * it yields a turn (so probes and writes get in between), logs a close entry and waits
 * until that entry is stable, then goes again. One loop at a time; it stops when the close
 * is done, when a forward fails or the replica's memory is dropped (`stop`), and the next
 * step or probe starts it again (`kick`).
 */

/** What the driver needs from its replica host. */
export interface CloseLink {
  /** Whether the replica is a primary with a close held back. */
  closing(): boolean;
  /** Runs `logCloseEntry` as a step: the LSN to wait for, or anything else when the replica has no state. */
  logClose(): unknown;
  /** Resolves once `lsn` is stable; rejects if a forward fails first. */
  waitStable(lsn: number): Promise<unknown>;
}

/** Runs `step` at a later turn of the object, after calls waiting meanwhile; rejects if it throws (`ForwardPort.later`). */
type Later = <T>(step: () => T) => Promise<T>;

export class CloseDriver {
  readonly #link: CloseLink;
  readonly #later: Later;
  #running = false;
  /** Bumped by `stop`: a loop from an earlier generation ends at its next await. */
  #generation = 0;

  /** @param later defaults to a microtask. */
  constructor(link: CloseLink, later: Later = (step) => Promise.resolve().then(step)) {
    this.#link = link;
    this.#later = later;
  }

  /** Starts the loop if a close is held back and none runs. */
  kick(): void {
    if (!this.#running && this.#link.closing()) void this.#run(this.#generation);
  }

  /** Ends the running loop at its next await (the replica dropped its memory). */
  stop(): void {
    this.#generation += 1;
    this.#running = false;
  }

  async #run(generation: number): Promise<void> {
    this.#running = true;
    try {
      while (generation === this.#generation && this.#link.closing()) {
        const lsn = await this.#later(() => this.#link.logClose());
        if (typeof lsn !== "number" || generation !== this.#generation) return;
        await this.#link.waitStable(lsn);
      }
    } catch {
      // A failed forward (the entry stays logged) or step (the port reports it; memory reloads): the next step's kick goes on.
    } finally {
      if (generation === this.#generation) this.#running = false;
    }
  }
}
