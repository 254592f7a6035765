/**
 * God's-eye record of each partition's stable log (issue 10), fed by every replica's
 * storage writes: which entry each LSN holds once some replica made it stable, by whom
 * and at which epoch. Two invariants are checked as entries become stable:
 * `stable-log` (one entry per LSN across replicas) and `zombie-write` (a primary of an
 * older epoch never makes a new write stable after a newer primary made writes stable).
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
  /** partition → LSN → the entry first made stable there. */
  readonly partitions = new Map<number, Map<number, StableEntry>>();
  /** partition → the highest epoch at which a primary made a new entry stable. */
  readonly #primaryEpochs = new Map<number, number>();
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

  /** The partition's stable entries in LSN order, up to `throughLsn`, and the first missing LSN if any. */
  log(partition: number, throughLsn: number): { entries: LogEntry[]; missing: number | null } {
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
    const map = this.partitions.get(meta.partition) ?? new Map<number, StableEntry>();
    this.partitions.set(meta.partition, map);
    const earlier = map.get(entry.lsn);
    if (earlier) {
      const same = earlier.entry.producer === entry.producer && earlier.entry.seq === entry.seq && earlier.entry.records === entry.records;
      if (!same) {
        this.#violations.add(
          "stable-log",
          `partition ${meta.partition} LSN ${entry.lsn}: ${meta.name} (epoch ${meta.epoch}) made ${entry.producer}#${entry.seq} stable, ${earlier.by} (epoch ${earlier.epoch}) made ${earlier.entry.producer}#${earlier.entry.seq} stable`,
        );
      }
      return;
    }
    map.set(entry.lsn, { entry, by: meta.name, epoch: meta.epoch });
    if (meta.role !== "primary") return;
    const newest = this.#primaryEpochs.get(meta.partition) ?? 0;
    if (meta.epoch < newest) {
      this.#violations.add(
        "zombie-write",
        `partition ${meta.partition}: ${meta.name}, primary of epoch ${meta.epoch}, made ${entry.producer}#${entry.seq} stable at LSN ${entry.lsn} after a primary of epoch ${newest} made writes stable`,
      );
    } else {
      this.#primaryEpochs.set(meta.partition, meta.epoch);
    }
  }
}
