/**
 * What a replica needs from durable storage. The Durable Object backs it with SQLite;
 * tests and the simulator back it with memory. `persist` must be atomic.
 */
import type { ResultFilter } from "../operators/tumbling-window.ts";
import type { Checkpoint, LogEntry, ReplicaMeta } from "../wire/persisted.ts";
import type { WindowResult } from "../wire/window-result.ts";
import type { ReplicaEffects } from "./replica-state.ts";

export interface ReplicaStorage {
  /** The stored meta, or null for a replica never initialised. */
  loadMeta(): ReplicaMeta | null;
  /** The newest checkpoint, or null. */
  loadCheckpoint(): Checkpoint | null;
  /** Log entries with `fromLsn ≤ lsn ≤ toLsn`, ascending. */
  readLog(fromLsn: number, toLsn: number): LogEntry[];
  /** Closed results of windows overlapping [fromMs, toMs) (for `key` if given), in (start, key) order. */
  readOutputs(filter: ResultFilter, windowSizeMs: number): WindowResult[];
  /** Writes meta and a step's effects in one atomic transaction. */
  persist(meta: ReplicaMeta, effects: ReplicaEffects): void;
}
