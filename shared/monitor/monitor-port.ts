/**
 * How the monitor reaches replicas. Each dataflow's monitor object backs it with Durable Object stubs
 * and deadlines; the simulator backs it with simulated replicas. A call that fails or
 * misses its deadline rejects.
 */
import type { MovePort } from "../moves/advance-move.ts";
import type { DataflowSpec } from "../wire/dataflow-spec.ts";
import type { LogEntry } from "../wire/persisted.ts";
import type {
  BeginSeedReply,
  FinishSeed,
  FinishSeedReply,
  FlushReply,
  InitReplica,
  NumberedOutput,
  Refusal,
  Replicate,
  ReplicateReply,
  ReplicaStatus,
  SeedChunkReply,
  SeedProgressReply,
  Write,
  WriteReply,
} from "../wire/replica-rpc.ts";

/** `moveStep` (from `MovePort`): one step of a key-group move on a pair's primary (issue 28). */
export interface MonitorPort extends MovePort {
  probe(name: string): Promise<ReplicaStatus | null>;
  configure(name: string, msg: InitReplica): Promise<{ status: "ok" } | Refusal>;
  beginSeed(name: string, epoch: number): Promise<BeginSeedReply>;
  readSeedChunk(name: string, epoch: number, id: string, index: number): Promise<SeedChunkReply>;
  /** Stages a chunk on the fresh replica, which restores the slice it completes (`spec`: the dataflow's, to rebuild its operator). */
  acceptSeedChunk(name: string, id: string, index: number, body: string, spec: DataflowSpec): Promise<{ status: "ok" } | Refusal>;
  /** What the fresh replica holds of snapshot `id` of `chunks` chunks, so a seed resumes where it is (`advance-recovery.ts`). */
  seedProgress(name: string, id: string, chunks: number): Promise<SeedProgressReply>;
  /** `lsn`: the survivor's logged LSN now (pacing). */
  readOutputPage(name: string, epoch: number, afterSeq: number, limit: number): Promise<{ status: "ok"; outputs: NumberedOutput[]; lsn: number } | Refusal>;
  acceptOutputs(name: string, outputs: NumberedOutput[]): Promise<{ status: "ok" } | Refusal>;
  finishSeed(name: string, msg: FinishSeed): Promise<FinishSeedReply>;
  /** Recovery's catch-up: copies a survivor's log into a fresh replica before it is attached. */
  readLog(name: string, epoch: number, fromLsn: number, toLsn: number): Promise<LogEntry[] | Refusal>;
  replicate(name: string, msg: Replicate): Promise<ReplicateReply>;
  /** Asks a primary to bring its standby up to everything it logged (`sync-standby.ts`). */
  flush(name: string, epoch: number): Promise<FlushReply>;
  /**
   * Called after each step that copied seed data, telling whether the survivor took writes
   * since the previous one: the monitor pauses to leave the thread to ingest
   * (`platform/seed-pacing.ts`); without it, steps follow each other at once.
   */
  paceSeed?(ingestActive: boolean): Promise<void>;
  /** Only for clock ticks (`send-ticks.ts`): the monitor writes them like a router writes batches. */
  write(name: string, msg: Write): Promise<WriteReply>;
}

/** What one probe found: the replica's status (null: it has no state), or that it did not answer. */
export type ProbeResult = { ok: true; status: ReplicaStatus | null } | { ok: false; error: string };
