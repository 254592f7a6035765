/**
 * Payloads of the RPCs between routers, the coordinator and replicas (DESIGN.md §4).
 * Internal callers pass already-typed values; replies are result unions keyed on
 * `status`, never exceptions, for expected outcomes such as a stale epoch.
 */
import { z } from "zod";
import { StoredDataflowSpecSchema } from "./dataflow-spec.ts";
import { LogEntrySchema, RoleSchema } from "./persisted.ts";
import { WindowResultSchema } from "./window-result.ts";

/** Which dataflow partition a replica serves. */
const ReplicaIdentitySchema = z.object({
  name: z.string(),
  dataflowId: z.string(),
  partition: z.number().int().min(0),
  spec: StoredDataflowSpecSchema,
});

/**
 * Sent by the coordinator to (re)configure a replica for an epoch. Idempotent. Only a
 * dataflow's creation sets `create`: a route member that lost its state must be
 * replaced, never silently re-created empty.
 */
const InitReplicaSchema = ReplicaIdentitySchema.extend({
  role: RoleSchema,
  epoch: z.number().int().min(1),
  hasStandby: z.boolean(),
  /** The route's version: within an epoch, a configuration older than one applied is ignored (late deliveries). */
  version: z.number().int().min(0),
  create: z.boolean().optional(),
});
export type InitReplica = z.infer<typeof InitReplicaSchema>;

/** A partition's sub-batch sent to the primary, which assigns it an LSN. */
const ApplyBatchSchema = z.object({
  epoch: z.number().int().min(1),
  producer: z.string(),
  seq: z.number().int().min(1),
  records: z.string(),
});
export type ApplyBatch = z.infer<typeof ApplyBatchSchema>;

/** Log entries sent to the standby, which must end up holding every LSN up to `upToLsn`. */
const ReplicateSchema = z.object({
  epoch: z.number().int().min(1),
  entries: z.array(LogEntrySchema),
  upToLsn: z.number().int().min(0),
});
export type Replicate = z.infer<typeof ReplicateSchema>;

/** Tells the primary that its standby holds every LSN up to `lsn`. */
const AckStandbySchema = z.object({
  epoch: z.number().int().min(1),
  lsn: z.number().int().min(0),
});
export type AckStandby = z.infer<typeof AckStandbySchema>;

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

/** The primary's answer to {@link ApplyBatch}. */
const ApplyBatchReplySchema = z.union([
  /** `late`: records of the batch the operator dropped as late, when it was applied at once (no standby). */
  z.object({ status: z.literal("applied"), lsn: z.number().int(), late: z.number().int().optional() }),
  /** Already logged here; `lsn` is the primary's current LSN, which covers it. */
  z.object({ status: z.literal("duplicate"), lsn: z.number().int() }),
  /** Below the dedup window: cannot tell whether it was applied. */
  z.object({ status: z.literal("too-old"), high: z.number().int() }),
  RefusalSchema,
]);
export type ApplyBatchReply = z.infer<typeof ApplyBatchReplySchema>;

/** The standby's answer to {@link Replicate}: `ok` when it holds `upToLsn`, else `gap` with what it holds. */
const ReplicateReplySchema = z.union([
  /** `late`: records of entry `upToLsn` the operator dropped as late, when this replica remembers it. */
  z.object({ status: z.literal("ok"), lsn: z.number().int(), late: z.number().int().optional() }),
  z.object({ status: z.literal("gap"), lsn: z.number().int() }),
  RefusalSchema,
]);
export type ReplicateReply = z.infer<typeof ReplicateReplySchema>;

/** The primary's answer to {@link AckStandby}: its stable LSN afterwards. */
const AckStandbyReplySchema = z.union([
  z.object({ status: z.literal("ok"), appliedLsn: z.number().int() }),
  RefusalSchema,
]);
export type AckStandbyReply = z.infer<typeof AckStandbyReplySchema>;

/** A replica's progress, for probes and status pages. */
export const ReplicaStatusSchema = z.object({
  name: z.string(),
  dataflowId: z.string(),
  partition: z.number().int(),
  role: RoleSchema.nullable(),
  epoch: z.number().int(),
  hasStandby: z.boolean(),
  holdLogAfterLsn: z.number().int().nullable(),
  configVersion: z.number().int(),
  lsn: z.number().int(),
  appliedLsn: z.number().int(),
  standbyAckLsn: z.number().int(),
  checkpointLsn: z.number().int(),
  outputSeq: z.number().int(),
  lateRecords: z.number().int(),
});
export type ReplicaStatus = z.infer<typeof ReplicaStatusSchema>;

/** The survivor's answer to a request to start a seed snapshot. */
const BeginSeedReplySchema = z.union([
  z.object({ status: z.literal("ok"), id: z.string(), lsn: z.number().int(), outputSeq: z.number().int(), chunks: z.number().int() }),
  RefusalSchema,
]);
export type BeginSeedReply = z.infer<typeof BeginSeedReplySchema>;

/** One chunk of a seed snapshot, or `gone` when the survivor no longer holds that snapshot. */
const SeedChunkReplySchema = z.union([
  z.object({ status: z.literal("ok"), body: z.string() }),
  z.object({ status: z.literal("gone") }),
  RefusalSchema,
]);
export type SeedChunkReply = z.infer<typeof SeedChunkReplySchema>;

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
