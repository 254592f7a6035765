/**
 * What a replica needs from durable storage. The Durable Object backs it with SQLite;
 * tests and the simulator back it with memory. `persist` and `installSeed` are atomic.
 */
import type { ResultFilter } from "../operators/operator.ts";
import type { LogEntry, ReplicaMeta } from "../wire/persisted.ts";
import type { NumberedOutput } from "../wire/replica-rpc.ts";
import type { WindowResult } from "../wire/window-result.ts";
import type { ReplicaEffects } from "./replica-state.ts";

export interface ReplicaStorage {
  /** The stored meta, or null for a replica never initialised. */
  loadMeta(): ReplicaMeta | null;
  /**
   * The rows in order of the stored checkpoint as of `lsn` (the meta's `checkpointLsn`;
   * `shared/checkpoint/checkpoint-rows.ts`; none: empty). Rows staged by a spread
   * checkpoint not finished yet carry a higher LSN and are never part of it.
   */
  loadCheckpointRows(lsn: number): string[];
  /** How many chunks the stored checkpoint as of `lsn` has (0: none); chunks stay well under the RPC size limit. */
  checkpointChunkCount(lsn: number): number;
  /** One chunk of the stored checkpoint as of `lsn`, or null past the end (or when the stored one is not as of `lsn`). */
  readCheckpointChunk(lsn: number, index: number): string | null;
  /** Log entries with `fromLsn ≤ lsn ≤ toLsn`, ascending. */
  readLog(fromLsn: number, toLsn: number): LogEntry[];
  /** Closed results of windows overlapping [fromMs, toMs) (for `key` if given), in (start, key) order. */
  readOutputs(filter: ResultFilter, windowSizeMs: number): WindowResult[];
  /** Up to `limit` outputs with `outputSeq > afterSeq`, ascending. */
  readOutputPage(afterSeq: number, limit: number): NumberedOutput[];
  /** Writes meta and a step's effects in one atomic transaction. */
  persist(meta: ReplicaMeta, effects: ReplicaEffects): void;

  /** Seeding, on the fresh replica: keeps one chunk of a snapshot being copied. */
  stageSeedChunk(snapshotId: string, index: number, body: string): void;
  /** Seeding: stores copied outputs (idempotent by `outputSeq`). */
  stageOutputs(outputs: readonly NumberedOutput[]): void;
  /** Seeding: the first of chunks `0..chunks-1` of a snapshot not staged, or null when all are. */
  firstMissingSeedChunk(snapshotId: string, chunks: number): number | null;
  /** Seeding: the staged chunks `0..chunks-1` of a snapshot, in order (call once none is missing). */
  readStagedSeed(snapshotId: string, chunks: number): string[];
  /** How many outputs are stored. */
  countOutputs(): number;
  /** Seeding: atomically writes meta, makes the staged chunks of the snapshot the checkpoint's rows, and drops staged chunks. */
  installSeed(meta: ReplicaMeta, snapshotId: string, chunks: number): void;
  /** Deletes everything (the `wipe` fault). */
  wipe(): void;
}
