/**
 * God's-eye record of each partition's stable log (issue 10), fed by every replica's
 * storage writes: which entry each LSN holds once some replica made it stable, by whom
 * and at which epoch. Two invariants are checked as entries become stable:
 * `stable-log` (one entry per LSN across replicas) and `zombie-write` (a primary of an
 * older epoch never makes stable an LSN a newer epoch's primary already wrote at).
 */
import type { LogEntry, ReplicaMeta } from "../../shared/wire/persisted.ts";
import type { MemoryReplicaStorage } from "../helpers/memory-replica-storage.ts";
import type { Violations } from "./violations.ts";

interface StableEntry {
  entry: LogEntry;
  by: string;
  epoch: number;
}

export class StableHistory {
  /** `dataflow/partition` → LSN → the entry first made stable there. */
  readonly partitions = new Map<string, Map<number, StableEntry>>();
  /** `dataflow/partition` → epoch → the lowest LSN a primary of that epoch made stable first. */
  readonly #firstNewLsn = new Map<string, Map<number, number>>();
  readonly #violations: Violations;

  constructor(violations: Violations) {
    this.#violations = violations;
  }

  /** Wraps `storage.persist` so every entry it makes stable is recorded (outermost wrapper). */
  watch(storage: MemoryReplicaStorage): void {
    const persist = storage.persist.bind(storage);
    storage.persist = (meta, effects) => {
      const before = storage.meta?.appliedLsn ?? 0;
      const logged = new Map(effects.log.map((e) => [e.lsn, e]));
      const stable: LogEntry[] = [];
      for (let lsn = before + 1; lsn <= meta.appliedLsn; lsn++) {
        // A seed installs a checkpoint without its log: those entries came from its source.
        const entry = logged.get(lsn) ?? storage.log.get(lsn);
        if (entry) stable.push({ ...entry });
      }
      persist(meta, effects);
      for (const entry of stable) this.#record(meta, entry);
    };
  }

  /** The stable entries of `partition` (`dataflow/partition`) in LSN order, up to `throughLsn`, and the first missing LSN if any. */
  log(partition: string, throughLsn: number): { entries: LogEntry[]; missing: number | null } {
    const map = this.partitions.get(partition) ?? new Map<number, StableEntry>();
    const entries: LogEntry[] = [];
    for (let lsn = 1; lsn <= throughLsn; lsn++) {
      const held = map.get(lsn);
      if (!held) return { entries, missing: lsn };
      entries.push(held.entry);
    }
    return { entries, missing: null };
  }

  #record(meta: ReplicaMeta, entry: LogEntry): void {
    const where = partitionOf(meta);
    const map = this.partitions.get(where) ?? new Map<number, StableEntry>();
    this.partitions.set(where, map);
    if (meta.role === "primary") this.#checkEpochOrder(meta, entry);
    const earlier = map.get(entry.lsn);
    if (!earlier) {
      map.set(entry.lsn, { entry, by: meta.name, epoch: meta.epoch });
      if (meta.role === "primary") this.#firstNew(where).set(meta.epoch, Math.min(this.#firstNew(where).get(meta.epoch) ?? Infinity, entry.lsn));
      return;
    }
    const same = earlier.entry.producer === entry.producer && earlier.entry.seq === entry.seq && earlier.entry.records === entry.records;
    if (!same) {
      this.#violations.add(
        "stable-log",
        `${where} LSN ${entry.lsn}: ${meta.name} (epoch ${meta.epoch}) made ${entry.producer}#${entry.seq} stable, ${earlier.by} (epoch ${earlier.epoch}) made ${earlier.entry.producer}#${earlier.entry.seq} stable`,
      );
    }
  }

  /**
   * A primary of epoch e may still make stable what its standby held at epoch e (a late
   * acknowledgement), all of it below where the next epoch's primary started writing; an
   * LSN at or past that point is a write a zombie accepted at its old epoch.
   */
  #checkEpochOrder(meta: ReplicaMeta, entry: LogEntry): void {
    for (const [epoch, firstLsn] of this.#firstNew(partitionOf(meta))) {
      if (epoch > meta.epoch && firstLsn <= entry.lsn) {
        this.#violations.add(
          "zombie-write",
          `${partitionOf(meta)}: ${meta.name}, primary of epoch ${meta.epoch}, made ${entry.producer}#${entry.seq} stable at LSN ${entry.lsn}; the primary of epoch ${epoch} made new writes stable from LSN ${firstLsn} on`,
        );
        return;
      }
    }
  }

  /** Per epoch, the lowest LSN a primary of that epoch made stable first. */
  #firstNew(partition: string): Map<number, number> {
    let map = this.#firstNewLsn.get(partition);
    if (!map) this.#firstNewLsn.set(partition, (map = new Map()));
    return map;
  }
}

/** `dataflow/partition`: how the history names a replica's partition. */
function partitionOf(meta: Pick<ReplicaMeta, "dataflowId" | "partition">): string {
  return `${meta.dataflowId}/${meta.partition}`;
}
