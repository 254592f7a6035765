/**
 * The simulator's invariants (issue 4): what a run must never do, checked while it
 * runs (cursor reads, writers per epoch) and after it settles (exactly-once counts,
 * replicas agree, every partition healthy).
 */
import type { NumberedOutput, ReplicaStatus } from "../../shared/wire/replica-rpc.ts";

/** A cursor-following reader of one partition's output stream. */
export class CursorReader {
  cursor = 0;
  readonly seen = new Map<number, string>();
  readonly #violations: string[];
  readonly #partition: number;

  constructor(partition: number, violations: string[]) {
    this.#partition = partition;
    this.#violations = violations;
  }

  /** Takes a page read after `cursor`: it must continue the stream without gaps, repeats or changes. */
  accept(outputs: readonly NumberedOutput[], from: string): void {
    for (const { outputSeq, result } of outputs) {
      const body = JSON.stringify(result);
      const earlier = this.seen.get(outputSeq);
      if (earlier !== undefined && earlier !== body) {
        this.#violations.push(`partition ${this.#partition}: output ${outputSeq} from ${from} differs from what the reader already saw (retracted)`);
      }
      if (outputSeq <= this.cursor) {
        this.#violations.push(`partition ${this.#partition}: output ${outputSeq} from ${from} repeated (cursor ${this.cursor})`);
        continue;
      }
      if (outputSeq !== this.cursor + 1) {
        this.#violations.push(`partition ${this.#partition}: output ${this.cursor + 1} skipped, ${from} sent ${outputSeq}`);
      }
      this.seen.set(outputSeq, body);
      this.cursor = outputSeq;
    }
  }
}

/** Per epoch of a partition, at most one replica may accept writes. */
export function checkWriters(writers: ReadonlyMap<string, ReadonlySet<string>>, violations: string[]): void {
  for (const [key, names] of writers) {
    if (names.size > 1) violations.push(`two replicas accepted writes in partition@epoch ${key}: ${[...names].join(", ")}`);
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
}

/**
 * Exactly once: every record of every acknowledged batch counted once (or dropped as
 * late), those of unacknowledged batches at most once; and both replicas equal.
 */
export function checkSettled(p: SettledPartition, expectedRecords: { min: number; max: number }, violations: string[]): void {
  const where = `partition ${p.partition}`;
  if (!p.primary || !p.standby) {
    violations.push(`${where}: settled without ${p.primary ? "a standby" : "a primary"}`);
    return;
  }
  const total = p.counted + p.primary.lateRecords;
  if (total < expectedRecords.min || total > expectedRecords.max) {
    const range = expectedRecords.min === expectedRecords.max ? `${expectedRecords.min}` : `${expectedRecords.min}..${expectedRecords.max}`;
    violations.push(`${where}: counted ${p.counted} + ${p.primary.lateRecords} late = ${total} records, expected ${range}`);
  }
  if (p.primary.appliedLsn !== p.primary.lsn) violations.push(`${where}: primary stable at ${p.primary.appliedLsn} of ${p.primary.lsn}`);
  if (p.standby.lsn !== p.primary.lsn) violations.push(`${where}: standby at LSN ${p.standby.lsn}, primary at ${p.primary.lsn}`);
  if (p.standby.lateRecords !== p.primary.lateRecords) violations.push(`${where}: replicas disagree on late records`);
  if (p.primaryOutputs !== p.standbyOutputs) violations.push(`${where}: primary and standby emitted different outputs`);
}
