/**
 * A monitor's dataflow record, probe history, idle marker and tombstone in its key-value
 * storage (issue 29: each dataflow's monitor object holds its own one; the registry reads
 * the same keys once more, to migrate what it held for every dataflow before the upgrade). The monitor writes only what changed (issue 12): a record when it differs from
 * what was stored, the health map when its durable part did (`durableHealth`); the
 * latest health stays in memory for the status page and the next tick.
 */
import { z } from "zod";
import { durableHealth } from "../shared/monitor/durable-health.ts";
import type { IdleMarker } from "../shared/monitor/probe-schedule.ts";
import type { MonitorStore } from "../shared/monitor/run-monitor-tick.ts";
import type { ReleasedMemo } from "../shared/moves/advance-move.ts";
import { DataflowRecordSchema, HealthMapSchema, type DataflowRecord, type HealthMap } from "../shared/wire/routing.ts";

const DATAFLOW = "dataflow:";
const HEALTH = "health:";
const IDLE = "idle:";
const TOMBSTONE = "tombstone:";

/** A stored idle marker (`probe-schedule.ts`). */
const IdleMarkerSchema = z.object({ v: z.literal(1), fingerprint: z.string(), quietSinceMs: z.number() });

export class MonitorRecords {
  readonly #kv: SyncKvStorage;
  /** The newest health per dataflow (memory is authoritative while this instance lives). */
  readonly #health = new Map<string, HealthMap>();
  /** `durableHealth` of what is stored, per dataflow. */
  readonly #storedHealth = new Map<string, string>();
  /** What the releases of each dataflow's moves took (memory only: lost with the object, then asked for again). */
  readonly #released = new Map<string, ReleasedMemo>();

  constructor(kv: SyncKvStorage) {
    this.#kv = kv;
  }

  list(): DataflowRecord[] {
    return [...this.#kv.list({ prefix: DATAFLOW })].map(([, value]) => DataflowRecordSchema.parse(value));
  }

  read(id: string): DataflowRecord | null {
    const value = this.#kv.get(DATAFLOW + id);
    return value === undefined ? null : DataflowRecordSchema.parse(value);
  }

  put(record: DataflowRecord): void {
    this.#kv.put(DATAFLOW + record.id, record);
  }

  /**
   * Probe history is soft state that the next probes rebuild: one stored by an older
   * version that no longer parses is dropped (the monitor starts counting afresh) rather
   * than stopping every monitor tick.
   */
  health(id: string): HealthMap {
    let health = this.#health.get(id);
    if (!health) {
      const parsed = HealthMapSchema.safeParse(this.#kv.get(HEALTH + id) ?? {});
      health = parsed.success ? parsed.data : {};
      this.#health.set(id, health);
      this.#storedHealth.set(id, parsed.success ? durableHealth(health) : "");
    }
    return health;
  }

  /**
   * A store for one tick over `records` (as loaded): each save writes only what changed
   * since, and calls `onChanged` after writing a changed record.
   */
  tickStore(records: readonly DataflowRecord[], onChanged: () => void): MonitorStore {
    const stored = new Map(records.map((record) => [record.id, JSON.stringify(record)]));
    return {
      released: (id) => {
        let memo = this.#released.get(id);
        if (!memo) this.#released.set(id, (memo = new Map()));
        return memo;
      },
      save: async (record, health) => {
        const json = JSON.stringify(record);
        if (stored.get(record.id) !== json) {
          this.put(record);
          stored.set(record.id, json);
          onChanged();
        }
        this.#health.set(record.id, health);
        const durable = durableHealth(health);
        if (this.#storedHealth.get(record.id) !== durable) {
          this.#kv.put(HEALTH + record.id, health);
          this.#storedHealth.set(record.id, durable);
        }
      },
    };
  }

  /** The marker stored when the dataflow went idle, or null while it is active (or one that no longer parses). */
  idleMarker(id: string): IdleMarker | null {
    const parsed = IdleMarkerSchema.safeParse(this.#kv.get(IDLE + id));
    return parsed.success ? { fingerprint: parsed.data.fingerprint, quietSinceMs: parsed.data.quietSinceMs } : null;
  }

  setIdleMarker(id: string, marker: IdleMarker | null): void {
    if (marker === null) this.#kv.delete(IDLE + id);
    else this.#kv.put(IDLE + id, { v: 1, ...marker });
  }

  /** Stores probe history as it was (a migration's). */
  putHealth(id: string, health: HealthMap): void {
    this.#kv.put(HEALTH + id, health);
    this.#health.set(id, health);
    this.#storedHealth.set(id, durableHealth(health));
  }

  /** The highest epoch a deleted dataflow of this id reached (0: none). */
  tombstone(id: string): number {
    return z.number().int().min(0).parse(this.#kv.get(TOMBSTONE + id) ?? 0);
  }

  /** Keeps a tombstone of at least `epoch`. */
  raiseTombstone(id: string, epoch: number): void {
    if (epoch > this.tombstone(id)) this.#kv.put(TOMBSTONE + id, epoch);
  }

  /** The ids with a tombstone. */
  tombstoneIds(): string[] {
    return [...this.#kv.list({ prefix: TOMBSTONE })].map(([key]) => key.slice(TOMBSTONE.length));
  }

  /** Deletes everything stored about `id`, its tombstone included (once migrated elsewhere). */
  forget(id: string): void {
    for (const prefix of [DATAFLOW, HEALTH, IDLE, TOMBSTONE]) this.#kv.delete(prefix + id);
    this.#health.delete(id);
    this.#storedHealth.delete(id);
  }

  /** Removes a deleted dataflow's record and everything the monitor kept about it, leaving a tombstone at `epoch`. */
  remove(id: string, epoch: number): void {
    this.#kv.put(TOMBSTONE + id, Math.max(this.tombstone(id), epoch));
    for (const prefix of [DATAFLOW, HEALTH, IDLE]) this.#kv.delete(prefix + id);
    this.#health.delete(id);
    this.#storedHealth.delete(id);
  }
}
