/**
 * The simulator's invariants by name, and the violations a run records (issue 10): each
 * violation names the invariant it breaks, so a broken variant can be required to trip
 * the specific invariant it breaks rather than any.
 */

/** Every invariant the simulator checks; `docs/TESTING.md` lists which variant trips which. */
export const INVARIANTS = {
  "exactly-once": "each partition counted every record of every acknowledged batch once (or as late), and logged every batch at most once; once key groups moved, all partitions together counted every such record once (or as late)",
  golden: "stored outputs and open results equal a fresh operator fed the acknowledged batches in the partition's log order",
  "stable-log": "every replica that makes an LSN stable makes the same entry stable there",
  "zombie-write": "no write becomes stable for the first time on a primary of an older epoch than one already serving",
  "replicated-ack": "a batch acknowledged as replicated is held by both replicas of a healthy partition",
  "cursor-retract": "a cursor reader never sees an output change",
  "cursor-repeat": "a cursor reader never sees an output twice",
  "cursor-skip": "a cursor reader never misses an output",
  "stable-prefix": "every output a reader gets is already held by the standby",
  "results-once": "a primary never holds a (window, key) both as an output and as an open result (a close spread over steps included), and once key groups moved, no two partitions hold the same (window, key)",
  "one-writer-per-epoch": "per epoch of a partition, at most one replica accepts writes",
  "stage-exactly-once": "a settled stage holds every result of every upstream partition exactly once: its outputs and open results equal a fresh operator fed all of them, closed at its effective watermark",
  "stage-no-late": "no result reaches a stage after the stage closed its window: its clock is the lowest watermark over every upstream partition",
  "monitor-independent": "a primary that fails is replaced within 300 ms of when its monitor had reason to look (its alarm, or a report of a failed call) whenever its own dataflow's monitor was up and quick: a takeover never waits for another dataflow's monitor",
  settles: "after faults stop, everything is acknowledged and every partition healthy and caught up within 30 s",
  "replicas-agree": "a settled partition's replicas hold the same log, outputs, open results and late count",
  unavailable: "with both replicas down, the partition reports unavailable",
  exception: "no product code throws an error the simulator did not inject",
  simulator: "the simulator's own loops never crash (a bug in the simulator, never a variant caught)",
} as const;

export type Invariant = keyof typeof INVARIANTS;

export interface Violation {
  invariant: Invariant;
  detail: string;
}

/** The violations of one run, in the order found. */
export class Violations {
  readonly list: Violation[] = [];

  add(invariant: Invariant, detail: string): void {
    this.list.push({ invariant, detail });
  }

  /** Records an error thrown by product code with its stack (`invariant` "simulator": by the simulator's own loops). */
  exception(where: string, err: unknown, invariant: "exception" | "simulator" = "exception"): void {
    this.add(invariant, `${where}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  }

  has(invariant: Invariant): boolean {
    return this.list.some((v) => v.invariant === invariant);
  }

  get length(): number {
    return this.list.length;
  }
}

export function formatViolation(v: Violation): string {
  return `[${v.invariant}] ${v.detail}`;
}

/**
 * A failure the simulator injected (a crashed or hung replica, a deadline, a dead router
 * or monitor, a monitor down). Any other error is a bug and becomes a violation.
 */
export class InjectedFailure extends Error {
  override readonly name = "InjectedFailure";
}

/** A replica call that failed because product code threw: already recorded as a violation, so callers treat it as a failed call. */
export class RecordedError extends Error {
  override readonly name = "RecordedError";
}

/** Whether a caller may take `err` as an ordinary failed call (injected, or already recorded). */
export function isFailedCall(err: unknown): boolean {
  return err instanceof InjectedFailure || err instanceof RecordedError;
}
