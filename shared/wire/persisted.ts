/**
 * Records a replica keeps in durable storage. Each carries `v` so later deploys can read
 * old data (STYLE.md §2); reads tolerate unknown fields and check `v`.
 */
import { z } from "zod";
import { DataflowSpecSchema } from "./dataflow-spec.ts";

/** A replica's role within its partition's current epoch; a `retired` replica refuses all work. */
export const RoleSchema = z.enum(["primary", "standby", "retired"]);
export type Role = z.infer<typeof RoleSchema>;

/** Identity, role and progress of one replica. LSNs satisfy checkpointLsn ≤ appliedLsn ≤ lsn. */
export const ReplicaMetaSchema = z.object({
  v: z.literal(1),
  name: z.string(),
  dataflowId: z.string(),
  partition: z.number().int().min(0),
  spec: DataflowSpecSchema,
  role: RoleSchema,
  /** Highest epoch this replica has seen; calls from an older epoch are refused. */
  epoch: z.number().int().min(1),
  /** Whether a standby must acknowledge an entry before it counts as stable. */
  hasStandby: z.boolean(),
  /** Highest LSN logged here. */
  lsn: z.number().int().min(0),
  /** Highest LSN applied to the operator: the stable prefix. */
  appliedLsn: z.number().int().min(0),
  /** Highest LSN the standby acknowledged (primary only). */
  standbyAckLsn: z.number().int().min(0),
  /** LSN of the newest checkpoint (0: none yet). */
  checkpointLsn: z.number().int().min(0),
  /** Number of window results emitted so far; the next gets `outputSeq + 1`. */
  outputSeq: z.number().int().min(0),
  /** `outputSeq` as of the newest checkpoint. */
  checkpointOutputSeq: z.number().int().min(0).default(0),
  /** While a fresh standby is seeded: keep every log entry above this LSN (null: no hold). */
  holdLogAfterLsn: z.number().int().min(0).nullable().default(null),
  /** Route version of the configuration in force (see `InitReplica.version`). */
  configVersion: z.number().int().min(0).default(0),
});
export type ReplicaMeta = z.infer<typeof ReplicaMetaSchema>;

/** One logged batch: a partition's sub-batch of one posted batch, with its assigned LSN. */
export const LogEntrySchema = z.object({
  lsn: z.number().int().min(1),
  producer: z.string(),
  seq: z.number().int().min(1),
  /** The sub-batch's records as one JSON string (`WindowRecord[]`), kept serialized end to end. */
  records: z.string(),
});
export type LogEntry = z.infer<typeof LogEntrySchema>;

/** Per producer: highest applied seq and the applied seqs inside the dedup window, ascending. */
const ProducerWindowSchema = z.object({
  high: z.number().int(),
  applied: z.array(z.number().int()),
  /** Seqs at or below this were pruned: they can no longer be judged, whatever the window is now. */
  floor: z.number().int().default(0),
});

/** Dedup state: producer id → window. */
const DedupStateSchema = z.record(z.string(), ProducerWindowSchema);
export type DedupState = z.infer<typeof DedupStateSchema>;

/** Running aggregates of one key in one window; arrays are indexed by numeric field. */
interface Accumulator {
  n: number;
  sum: number[];
  min: number[];
  max: number[];
}

const isNumberArray = (value: unknown): value is number[] => Array.isArray(value) && value.every((x) => typeof x === "number");

/**
 * Checked with a plain predicate rather than an object schema: a checkpoint of a large
 * partition holds millions of these, and a schema per entry made loading it take seconds.
 */
const AccumulatorSchema = z.custom<Accumulator>((value) => {
  if (typeof value !== "object" || value === null) return false;
  const acc = value as Record<string, unknown>;
  return typeof acc.n === "number" && isNumberArray(acc.sum) && isNumberArray(acc.min) && isNumberArray(acc.max);
}, "an accumulator { n, sum[], min[], max[] }");

/** State of the tumbling-window operator: open windows by start (ms) then key. */
const TumblingWindowStateSchema = z.object({
  maxTimeMs: z.number().nullable(),
  lateRecords: z.number().int().min(0),
  open: z.record(z.string(), z.record(z.string(), AccumulatorSchema)),
});
export type TumblingWindowState = z.infer<typeof TumblingWindowStateSchema>;

/** A checkpoint: operator and dedup state as of `lsn`, and the output count at that point. */
export const CheckpointSchema = z.object({
  v: z.literal(1),
  lsn: z.number().int().min(0),
  outputSeq: z.number().int().min(0),
  operator: TumblingWindowStateSchema,
  dedup: DedupStateSchema,
});
export type Checkpoint = z.infer<typeof CheckpointSchema>;
