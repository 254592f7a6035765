/**
 * Records a replica keeps in durable storage. Each carries `v` so later deploys can read
 * old data (STYLE.md §2); reads tolerate unknown fields and check `v`.
 */
import * as z from "zod";
import { StoredDataflowSpecSchema } from "./dataflow-spec.ts";

/** A replica's role within its partition's current epoch; a `retired` replica refuses all work. */
export const RoleSchema = z.enum(["primary", "standby", "retired"]);
export type Role = z.infer<typeof RoleSchema>;

/** Identity, role and progress of one replica. LSNs satisfy checkpointLsn ≤ appliedLsn ≤ lsn. */
export const ReplicaMetaSchema = z.object({
  v: z.literal(1),
  name: z.string(),
  dataflowId: z.string(),
  partition: z.number().int().min(0),
  spec: StoredDataflowSpecSchema,
  role: RoleSchema,
  /** Highest epoch this replica has seen; calls from an older epoch are refused. */
  epoch: z.number().int().min(1),
  /** Whether a standby must acknowledge an entry before it counts as stable. */
  hasStandby: z.boolean(),
  /** The standby a primary forwards to (null: none; older records lack it until configured again). */
  standby: z.string().nullable().default(null),
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
  /** The stages reading this dataflow's results (issue 27); a primary delivers to them. */
  readers: z.array(z.string()).default([]),
});
export type ReplicaMeta = z.infer<typeof ReplicaMetaSchema>;

/** One logged batch: a partition's sub-batch of one posted batch, with its assigned LSN. */
export const LogEntrySchema = z.object({
  lsn: z.number().int().min(1),
  producer: z.string(),
  seq: z.number().int().min(1),
  /** The sub-batch's records as one JSON string (`FluxRecord[]`), kept serialized end to end. */
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
export const DedupStateSchema = z.record(z.string(), ProducerWindowSchema);
export type DedupState = z.infer<typeof DedupStateSchema>;

/** A checkpoint: operator and dedup state as of `lsn`, and the output count at that point. */
export const CheckpointSchema = z.object({
  v: z.literal(1),
  lsn: z.number().int().min(0),
  outputSeq: z.number().int().min(0),
  /** The operator's snapshot (a JSON value), checked by the operator's `restore`. */
  operator: z.unknown(),
  dedup: DedupStateSchema,
});
export type Checkpoint = z.infer<typeof CheckpointSchema>;

/**
 * How the SQLite adapter stores {@link ReplicaMeta} (issue 12): in parts written at their
 * own rates, so a step rewrites only the small progress row. `identity` is written when
 * the replica is created, `config` when a configuration changes it, `progress` by steps.
 * Each part's row is `{ v: 1, ...fields }`; loading merges them and parses the meta.
 */
export const META_PARTS = {
  identity: ["name", "dataflowId", "partition", "spec"],
  config: ["role", "epoch", "hasStandby", "standby", "holdLogAfterLsn", "configVersion", "readers"],
  progress: ["lsn", "appliedLsn", "standbyAckLsn", "checkpointLsn", "checkpointOutputSeq", "outputSeq"],
} as const satisfies Record<string, readonly (keyof ReplicaMeta)[]>;
export type MetaPart = keyof typeof META_PARTS;

/**
 * One stored log row: the entries one step logged (a write's batches, or what one forward
 * brought the standby), LSNs consecutive from the row's first LSN. Each entry keeps its
 * origin (`producer`, `seq`), so later sources (an upstream partition's outbox) fit.
 */
export const LogGroupSchema = z.object({
  v: z.literal(1),
  entries: z.array(z.tuple([z.string(), z.number().int().min(1), z.string()])),
});

/**
 * The head of a log row in the second form (issue 12: no escaping, no parsing to write):
 * this JSON on one line, a newline, then every entry's records text as is, back to back;
 * `entries` gives each entry's origin and the length of its records (UTF-16 code units).
 */
export const LogRowHeadSchema = z.object({
  v: z.literal(2),
  entries: z.array(z.tuple([z.string(), z.number().int().min(1), z.number().int().min(0)])),
});
