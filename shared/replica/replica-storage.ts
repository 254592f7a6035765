/**
 * What a replica needs from durable storage. The Durable Object backs it with SQLite;
 * tests and the simulator back it with memory. `persist` and `installSeed` are atomic.
 */
import type { ResultFilter } from "../operators/operator.ts";
import type { Checkpoint, LogEntry, ReplicaMeta } from "../wire/persisted.ts";
import type { NumberedOutput } from "../wire/replica-rpc.ts";
import type { WindowResult } from "../wire/window-result.ts";
import type { ReplicaEffects } from "./replica-state.ts";

export interface ReplicaStorage {
  /** The stored meta, or null for a replica never initialised. */
  loadMeta(): ReplicaMeta | null;
  /** The newest checkpoint, or null. */
  loadCheckpoint(): Checkpoint | null;
  /** How many chunks the stored checkpoint has (0: none); chunks stay well under the RPC size limit. */
  checkpointChunkCount(): number;
  /** One chunk of the stored checkpoint's serialized form, or null past the end. */
  readCheckpointChunk(index: number): string | null;
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
  /** Seeding: the staged snapshot reassembled, or the first missing chunk index. */
  readStagedSeed(snapshotId: string, chunks: number): { body: string } | { missing: number };
  /** How many outputs are stored. */
  countOutputs(): number;
  /** Seeding: atomically writes meta and the checkpoint, and drops staged chunks. */
  installSeed(meta: ReplicaMeta, checkpointBody: string): void;
  /** Deletes everything (the `wipe` fault). */
  wipe(): void;
}
