/**
 * Payloads of the RPCs between routers, monitors and replicas (DESIGN.md §4).
 * Internal callers pass already-typed values; replies are result unions keyed on
 * `status`, never exceptions, for expected outcomes such as a stale epoch.
 */
import * as z from "zod";
import { StoredDataflowSpecSchema } from "./dataflow-spec.ts";
import { LogEntrySchema, RoleSchema } from "./persisted.ts";
import { WindowResultSchema } from "./window-result.ts";
import { DeliveryReplySchema, DeliverySchema, DownstreamProgressSchema, EdgeStatusSchema } from "./exchange.ts";

/** Which dataflow partition a replica serves. */
const ReplicaIdentitySchema = z.object({
  name: z.string(),
  dataflowId: z.string(),
  partition: z.number().int().min(0),
  spec: StoredDataflowSpecSchema,
});

/**
 * Sent by the dataflow's monitor to (re)configure a replica for an epoch. Idempotent. Only a
 * dataflow's creation sets `create`: a route member that lost its state must be
 * replaced, never silently re-created empty.
 */
const InitReplicaSchema = ReplicaIdentitySchema.extend({
  role: RoleSchema,
  epoch: z.number().int().min(1),
  hasStandby: z.boolean(),
  /** The primary's standby, to which it forwards every entry itself (null: none, or not a primary). */
  standby: z.string().nullable().optional(),
  /** The route's version: within an epoch, a configuration older than one applied is ignored (late deliveries). */
  version: z.number().int().min(0),
  create: z.boolean().optional(),
  /** The stages reading this dataflow's results (issue 27), to which a primary delivers them; absent: none. */
  readers: z.array(z.string()).optional(),
});
export type InitReplica = z.infer<typeof InitReplicaSchema>;

/**
 * One batch for a partition: its idempotency key (the origin of the entry: a client
 * producer, the monitor's clock, later an upstream partition's outbox) and its records.
 */
const WriteBatchSchema = z.object({
  producer: z.string(),
  seq: z.number().int().min(1),
  records: z.string(),
});
export type WriteBatch = z.infer<typeof WriteBatchSchema>;

/**
 * Sent to the primary: batches (from one router, coalesced) it dedups, logs and forwards
 * to its standby itself, answering once each is stable (DESIGN.md §4, issue 12).
 */
const WriteSchema = z.object({
  epoch: z.number().int().min(1),
  batches: z.array(WriteBatchSchema),
});
export type Write = z.infer<typeof WriteSchema>;

/** Log entries sent to the standby, which must end up holding every LSN up to `upToLsn`. */
const ReplicateSchema = z.object({
  epoch: z.number().int().min(1),
  entries: z.array(LogEntrySchema),
  upToLsn: z.number().int().min(0),
});
export type Replicate = z.infer<typeof ReplicateSchema>;

/** Refusals every replica call may answer with instead of doing the work. */
const RefusalSchema = z.discriminatedUnion("status", [
  /** The caller's epoch is older than the replica's: refresh routing. */
  z.object({ status: z.literal("stale"), epoch: z.number().int() }),
  /** The caller's epoch is newer than the replica has been told about: it is not ready. */
  z.object({ status: z.literal("behind"), epoch: z.number().int() }),
  /** The replica does not hold the role the call needs in this epoch. */
  z.object({ status: z.literal("wrong-role"), role: RoleSchema.nullable() }),
]);
export type Refusal = z.infer<typeof RefusalSchema>;

/**
 * What became of one batch of a {@link Write}. `replicated`: its standby holds it (false
 * while the partition has no standby). `late`: records the operator dropped as too late
 * when the entry was applied. `unconfirmed`: logged (or not) but not known to be stable;
 * resend it with the same seq.
 */
const BatchOutcomeSchema = z.union([
  z.object({ status: z.literal("applied"), lsn: z.number().int(), replicated: z.boolean(), late: z.number().int() }),
  /** Already logged here; `lsn` covers it. */
  z.object({ status: z.literal("duplicate"), lsn: z.number().int(), replicated: z.boolean() }),
  /** Below the dedup window: cannot tell whether it was applied. */
  z.object({ status: z.literal("too-old"), high: z.number().int() }),
  z.object({ status: z.literal("unconfirmed"), reason: z.string() }),
  /** Holds records of a key group moving away (issue 28): nothing of it was logged; `until` says what ends it. */
  z.object({ status: z.literal("blocked"), reason: z.string(), until: z.string() }),
]);
export type BatchOutcome = z.infer<typeof BatchOutcomeSchema>;

/**
 * The primary's answer to {@link Write}: one outcome per batch, in order (a batch holding
 * records of a key group moving away is `blocked` alone: issue 28); or `blocked`: nothing
 * was logged, because a stage reading this dataflow lags too far behind (issue 27;
 * `reason` names the edge); `until` says, in words, what ends it.
 */
const WriteReplySchema = z.union([
  z.object({ status: z.literal("ok"), results: z.array(BatchOutcomeSchema) }),
  // `until` defaults for a replica of a version before issue 28 (only stages blocked writes then).
  z.object({ status: z.literal("blocked"), reason: z.string(), until: z.string().default("the stage catches up") }),
  RefusalSchema,
]);
export type WriteReply = z.infer<typeof WriteReplySchema>;

/** The primary's answer to a flush: its standby holds every LSN up to `lsn`, or why not. */
const FlushReplySchema = z.union([
  z.object({ status: z.literal("ok"), lsn: z.number().int() }),
  z.object({ status: z.literal("unconfirmed"), reason: z.string() }),
  RefusalSchema,
]);
export type FlushReply = z.infer<typeof FlushReplySchema>;

/** The standby's answer to {@link Replicate}: `ok` when it holds `upToLsn`, else `gap` with what it holds. */
const ReplicateReplySchema = z.union([
  z.object({ status: z.literal("ok"), lsn: z.number().int() }),
  z.object({ status: z.literal("gap"), lsn: z.number().int() }),
  RefusalSchema,
]);
export type ReplicateReply = z.infer<typeof ReplicateReplySchema>;

/** A replica's progress, for probes and status pages. */
export const ReplicaStatusSchema = z.object({
  name: z.string(),
  dataflowId: z.string(),
  partition: z.number().int(),
  role: RoleSchema.nullable(),
  epoch: z.number().int(),
  hasStandby: z.boolean(),
  standby: z.string().nullable(),
  holdLogAfterLsn: z.number().int().nullable(),
  configVersion: z.number().int(),
  lsn: z.number().int(),
  appliedLsn: z.number().int(),
  standbyAckLsn: z.number().int(),
  checkpointLsn: z.number().int(),
  outputSeq: z.number().int(),
  lateRecords: z.number().int(),
  /**
   * The load it carries (issue 28): the (window, key) entries its operator holds open (null:
   * a custom operator that does not say), and the characters of its last checkpoint (its
   * state's stored size; 0 before the first). Absent in statuses of older deploys.
   */
  openEntries: z.number().int().nullable().default(null),
  checkpointChars: z.number().int().default(0),
  /**
   * Records it applied since it was loaded (a restart starts again at 0): the monitor
   * derives events per second from two probes (issue 28). Absent in statuses of older deploys.
   */
  recordsApplied: z.number().int().default(0),
  /** The stages it delivers to as primary (issue 27); absent in statuses of older deploys. */
  readers: z.array(z.string()).default([]),
  /** A stage's progress per upstream partition: what it holds of each (issue 27); only for stages. */
  sources: DownstreamProgressSchema.optional(),
  /** As an upstream primary, per edge to a stage's partition: what it delivered and what was acknowledged (soft state). */
  edges: z.array(EdgeStatusSchema).optional(),
});
export type ReplicaStatus = z.infer<typeof ReplicaStatusSchema>;

/** The survivor's answer to a request to start a seed snapshot. */
const BeginSeedReplySchema = z.union([
  z.object({ status: z.literal("ok"), id: z.string(), lsn: z.number().int(), outputSeq: z.number().int(), chunks: z.number().int() }),
  RefusalSchema,
]);
export type BeginSeedReply = z.infer<typeof BeginSeedReplySchema>;

/**
 * One chunk of a seed snapshot, or `gone` when the survivor no longer holds that snapshot.
 * `lsn`: the survivor's logged LSN now, so the monitor sees whether it takes writes (pacing).
 */
const SeedChunkReplySchema = z.union([
  z.object({ status: z.literal("ok"), body: z.string(), lsn: z.number().int().min(0) }),
  z.object({ status: z.literal("gone") }),
  RefusalSchema,
]);
export type SeedChunkReply = z.infer<typeof SeedChunkReplySchema>;

/**
 * What a fresh replica holds of a seed snapshot: `chunks` staged from chunk 0 without a
 * gap, and `outputSeq` outputs staged (they are copied in order from 1).
 */
const SeedProgressReplySchema = z.union([
  z.object({ status: z.literal("ok"), chunks: z.number().int().min(0), outputSeq: z.number().int().min(0) }),
  RefusalSchema,
]);
export type SeedProgressReply = z.infer<typeof SeedProgressReplySchema>;

/** A window result with its per-partition output sequence number. */
const NumberedOutputSchema = z.object({ outputSeq: z.number().int().min(1), result: WindowResultSchema });
export type NumberedOutput = z.infer<typeof NumberedOutputSchema>;

/** Installs a copied snapshot on a fresh replica, which becomes a standby at `epoch`. */
const FinishSeedSchema = ReplicaIdentitySchema.extend({
  epoch: z.number().int().min(1),
  snapshotId: z.string(),
  chunks: z.number().int().min(1),
  lsn: z.number().int().min(0),
  outputSeq: z.number().int().min(0),
});
export type FinishSeed = z.infer<typeof FinishSeedSchema>;

/** The fresh replica's answer to {@link FinishSeed}. */
const FinishSeedReplySchema = z.union([
  z.object({ status: z.literal("ok"), lsn: z.number().int() }),
  z.object({ status: z.literal("incomplete"), missing: z.string() }),
  RefusalSchema,
]);
export type FinishSeedReply = z.infer<typeof FinishSeedReplySchema>;

/** Sent to D_j's primary at the epoch U_i's routing knows for it: one delivery. */
const DeliverSchema = z.object({ epoch: z.number().int().min(1), delivery: DeliverySchema });
export type Deliver = z.infer<typeof DeliverSchema>;

/**
 * D_j's answer to {@link Deliver}: the reply (once stable), a refusal (stale routing:
 * refresh it), `unknown-source` when D does not read the source (a stale reader list), or
 * `unconfirmed` when it logged the delivery but could not make it stable (resend it).
 */
const DeliverReplySchema = z.union([
  DeliveryReplySchema,
  z.object({ status: z.literal("unknown-source"), message: z.string() }),
  z.object({ status: z.literal("unconfirmed"), reason: z.string() }),
  RefusalSchema,
]);
export type DeliverReply = z.infer<typeof DeliverReplySchema>;
