/**
 * The simulator's invariants (issue 4): what a run must never do, checked while it
 * runs (cursor reads, writers per epoch) and after it settles (exactly-once counts,
 * replicas agree, every partition healthy).
 */
import type { NumberedOutput, ReplicaStatus } from "../../shared/wire/replica-rpc.ts";
import type { WindowResult } from "../../shared/wire/window-result.ts";
import type { Violations } from "./violations.ts";

/** A cursor-following reader of one partition's output stream. */
export class CursorReader {
  cursor = 0;
  readonly seen = new Map<number, string>();
  readonly #violations: Violations;
  /** Which partition it reads, for messages: `df partition 2`. */
  readonly #partition: string;

  constructor(partition: string, violations: Violations) {
    this.#partition = partition;
    this.#violations = violations;
  }

  /** Takes a page read after `cursor`: it must continue the stream without gaps, repeats or changes. */
  accept(outputs: readonly NumberedOutput[], from: string): void {
    for (const { outputSeq, result } of outputs) {
      const body = JSON.stringify(result);
      const earlier = this.seen.get(outputSeq);
      if (earlier !== undefined && earlier !== body) {
        this.#violations.add("cursor-retract", `${this.#partition}: output ${outputSeq} from ${from} differs from what the reader already saw`);
      }
      if (outputSeq <= this.cursor) {
        this.#violations.add("cursor-repeat", `${this.#partition}: output ${outputSeq} from ${from} repeated (cursor ${this.cursor})`);
        continue;
      }
      if (outputSeq !== this.cursor + 1) {
        this.#violations.add("cursor-skip", `${this.#partition}: output ${this.cursor + 1} skipped, ${from} sent ${outputSeq}`);
      }
      this.seen.set(outputSeq, body);
      this.cursor = outputSeq;
    }
  }

  /** After the run: every output the reader saw is still what the partition holds at that number. */
  checkFinal(held: readonly NumberedOutput[]): void {
    const final = new Map(held.map((o) => [o.outputSeq, JSON.stringify(o.result)]));
    for (const [outputSeq, body] of this.seen) {
      if (final.get(outputSeq) !== body) {
        this.#violations.add("cursor-retract", `${this.#partition}: the reader saw output ${outputSeq} as ${body}, the partition now holds ${final.get(outputSeq) ?? "nothing"}`);
        return;
      }
    }
  }
}

/** A primary's outputs and open results never both hold a (window, key): a spread close's emitted keys are outputs only. */
export function checkResultsOnce(where: string, outputs: readonly NumberedOutput[], open: readonly WindowResult[], violations: Violations): void {
  const closed = new Set(outputs.map((o) => `${o.result.windowStartMs}/${o.result.key}`));
  const twice = open.find((r) => closed.has(`${r.windowStartMs}/${r.key}`));
  if (twice) violations.add("results-once", `${where}: window ${twice.windowStartMs} key ${twice.key} is both an output and an open result`);
}

/** Per epoch of a partition, at most one replica may accept writes. */
export function checkWriters(writers: ReadonlyMap<string, ReadonlySet<string>>, violations: Violations): void {
  for (const [key, names] of writers) {
    if (names.size > 1) violations.add("one-writer-per-epoch", `two replicas accepted writes in dataflow/partition@epoch ${key}: ${[...names].join(", ")}`);
  }
}

/** What a settled partition looks like from its replicas. */
export interface SettledPartition {
  partition: number;
  primary: ReplicaStatus | null;
  standby: ReplicaStatus | null;
  /** Sum of `n` over every window the primary holds, closed and open. */
  counted: number;
  primaryOutputs: string;
  standbyOutputs: string;
  primaryOpen: string;
  standbyOpen: string;
}

/** How many records a count must come to: every record of every acknowledged batch, and at most those of the others too. */
type Expected = { min: number; max: number };

function checkCount(where: string, counted: number, late: number, expected: Expected, violations: Violations): void {
  const total = counted + late;
  if (total >= expected.min && total <= expected.max) return;
  const range = expected.min === expected.max ? `${expected.min}` : `${expected.min}..${expected.max}`;
  violations.add("exactly-once", `${where}: counted ${counted} + ${late} late = ${total} records, expected ${range}`);
}

/**
 * Exactly once: every record of every acknowledged batch counted once (or dropped as
 * late), those of unacknowledged batches at most once (`expectedRecords`; null once key
 * groups moved, when the count is checked across partitions); and both replicas equal.
 */
export function checkSettled(p: SettledPartition, expectedRecords: Expected | null, violations: Violations): void {
  const where = `partition ${p.partition}`;
  if (!p.primary || !p.standby) {
    violations.add("settles", `${where}: settled without ${p.primary ? "a standby" : "a primary"}`);
    return;
  }
  if (expectedRecords) checkCount(where, p.counted, p.primary.lateRecords, expectedRecords, violations);
  if (p.primary.appliedLsn !== p.primary.lsn) violations.add("settles", `${where}: primary stable at ${p.primary.appliedLsn} of ${p.primary.lsn}`);
  if (p.standby.lsn !== p.primary.lsn) violations.add("settles", `${where}: standby at LSN ${p.standby.lsn}, primary at ${p.primary.lsn}`);
  if (p.standby.lateRecords !== p.primary.lateRecords) violations.add("replicas-agree", `${where}: replicas disagree on late records`);
  if (p.primaryOutputs !== p.standbyOutputs) violations.add("replicas-agree", `${where}: primary and standby emitted different outputs`);
  if (p.primaryOpen !== p.standbyOpen) violations.add("replicas-agree", `${where}: primary and standby hold different open results`);
}

/**
 * Across a dataflow's partitions, after key groups moved between them (issue 28): every
 * record of every acknowledged batch counted once or dropped as late, wherever its group
 * was at the time; and no (window, key) held by two partitions, as an output or open result.
 */
export function checkAcrossPartitions(
  all: { counted: number; late: number; results: readonly { where: string; result: WindowResult }[] },
  expectedRecords: Expected,
  violations: Violations,
): void {
  checkCount("all partitions", all.counted, all.late, expectedRecords, violations);
  const holder = new Map<string, string>();
  for (const { where, result } of all.results) {
    const id = `${result.windowStartMs}/${result.key}`;
    const first = holder.get(id);
    if (first !== undefined && first !== where) {
      violations.add("results-once", `window ${result.windowStartMs} key ${result.key} is held by ${first} and by ${where}`);
      return;
    }
    holder.set(id, where);
  }
}
