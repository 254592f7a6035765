/**
 * A dataflow monitor's durable records (issue 29: one monitor object per dataflow): dataflows, their routing tables and the monitor's
 * bookkeeping per partition (DESIGN.md §4). Every routing change bumps `epoch` and
 * `version`; replicas refuse calls from older epochs.
 */
import { z } from "zod";
import { StoredDataflowSpecSchema } from "./dataflow-spec.ts";
import { ReplicaStatusSchema } from "./replica-rpc.ts";

/** Health of a partition as its monitor sees it. */
const PartitionStatusSchema = z.enum(["healthy", "degraded", "recovering", "unavailable"]);


/** Progress of seeding a fresh standby from the surviving primary (DESIGN.md §4, online recovery). */
const RecoverySchema = z.object({
  /** The fresh replica being seeded. */
  replica: z.string(),
  startedAtMs: z.number(),
  /**
   * `seeding`: copying the snapshot and outputs; `catching-up`: replaying the survivor's
   * log; `attached`: standby under a new epoch, still copying what the primary logged
   * alone (up to `attachLsn`) before the partition counts as healthy again.
   */
  phase: z.enum(["seeding", "catching-up", "attached"]),
  /** In `attached`: the primary's LSN once it knew its new standby; everything up to it must be copied. */
  attachLsn: z.number().int().nullable().default(null),
  /** The snapshot being copied: the survivor's id for it, its LSN, chunk count and output count. */
  snapshot: z
    .object({ id: z.string(), lsn: z.number().int(), chunks: z.number().int(), outputSeq: z.number().int() })
    .nullable(),
  // How much of the snapshot is copied is not stored: the fresh replica's staged rows tell (`seedProgress`).
});
/** A partition's online recovery in progress. */
export type Recovery = z.infer<typeof RecoverySchema>;


/** Routing for one partition: which replica is primary, which standby, in which epoch. */
const PartitionRouteSchema = z.object({
  partition: z.number().int().min(0),
  epoch: z.number().int().min(1),
  primary: z.string(),
  standby: z.string().nullable(),
  status: PartitionStatusSchema,
  /** Bumped on every change of this route. */
  version: z.number().int().min(1),
  /** Generation number the next fresh replica of this partition gets. */
  nextGeneration: z.number().int().min(0).default(2),
  /** Replaced replicas still to be told to retire (they may be down: zombies in waiting). */
  retired: z.array(z.string()).default([]),
  /** Location hint each replica was created with (null: none). */
  hints: z.record(z.string(), z.string().nullable()).default({}),
  recovery: RecoverySchema.nullable().default(null),
});
export type PartitionRoute = z.infer<typeof PartitionRouteSchema>;

/** A fail-over or recovery step, a key-group move that ended (issue 28), or an unexpected monitor error, kept for the status page. */
const MonitorEventSchema = z.object({
  atMs: z.number(),
  partition: z.number().int(),
  kind: z.enum(["takeover", "degraded", "unavailable", "resumed", "recovery-started", "recovery-finished", "recovery-restarted", "monitor-error", "move-finished", "move-given-up"]),
  detail: z.string(),
});
export type MonitorEvent = z.infer<typeof MonitorEventSchema>;

/**
 * Which partition (replica pair) owns each key group of a dataflow (issue 28,
 * `keygroups/key-groups.ts`): keys hash to one of `groups` groups.
 */
const KeyGroupTableSchema = z.object({
  groups: z.number().int().min(1).max(4096),
  /** The owning partition of each group, by group; null: group g is on partition g mod the partition count. */
  owners: z.array(z.number().int().min(0)).nullable(),
});
export type KeyGroupTable = z.infer<typeof KeyGroupTableSchema>;

/**
 * A move of key groups from one partition's pair to another's, in progress (issue 28,
 * `shared/moves/`): its phase is recorded before the step it names is carried out, and
 * every step is idempotent, so a monitor restarted half-way goes on where it was.
 */
const KeyGroupMoveSchema = z.object({
  id: z.number().int().min(1),
  groups: z.array(z.number().int().min(0)).min(1),
  from: z.number().int().min(0),
  to: z.number().int().min(0),
  /** release, adopt, switch (routing sends the groups to `to`), forget; or return: given up before the switch. */
  phase: z.enum(["release", "adopt", "switch", "forget", "return"]),
  startedAtMs: z.number(),
  /** When the source released the groups: their records wait from then until the switch. */
  releasedAtMs: z.number().nullable().default(null),
  /** When routing switched to `to` (null: not yet). */
  switchedAtMs: z.number().nullable().default(null),
  /** Why the move is being given up (phase `return`). */
  failure: z.string().nullable().default(null),
});
export type KeyGroupMove = z.infer<typeof KeyGroupMoveSchema>;

/** A dataflow as stored: its spec and routing table. `ready` once every replica was initialised. */
export const DataflowRecordSchema = z.object({
  v: z.literal(1),
  id: z.string(),
  spec: StoredDataflowSpecSchema,
  createdAtMs: z.number(),
  ready: z.boolean(),
  /** Set by `DELETE`: routers skip it while its replicas' state is being removed. */
  deleting: z.boolean().default(false),
  routes: z.array(PartitionRouteSchema),
  /** Its key groups and their owners (issue 28); null: stored before, 16 groups per partition, group g on partition g mod P. */
  keyGroups: KeyGroupTableSchema.nullable().default(null),
  /** Key-group moves in progress (issue 28). */
  moves: z.array(KeyGroupMoveSchema).default([]),
  /** The number the next move gets. */
  nextMove: z.number().int().min(1).default(1),
  /** The stages reading this dataflow's results (issue 27), sorted; its primaries deliver to them. */
  readers: z.array(z.string()).default([]),
  /** Newest last; at most {@link MAX_EVENTS}. */
  events: z.array(MonitorEventSchema).default([]),
});
export type DataflowRecord = z.infer<typeof DataflowRecordSchema>;

/** How many recent monitor events a dataflow keeps. */
export const MAX_EVENTS = 50;

/** What the monitor remembers of one replica between ticks. */
const ReplicaHealthSchema = z.object({
  /** Consecutive probes missed (or answered without state). */
  misses: z.number().int().min(0),
  lastOkAtMs: z.number().nullable(),
  /** When the last counted miss happened (misses closer together than half a heartbeat count once). */
  lastMissAtMs: z.number().nullable().default(null),
  /** The last status the replica answered with. */
  last: ReplicaStatusSchema.nullable(),
  /** Records it applied per second between its last two answered probes (issue 28; null: not known yet, or it restarted between them). */
  eventsPerSecond: z.number().nullable().default(null),
});

/** Health of every replica the monitor watches, by replica name. */
export const HealthMapSchema = z.record(z.string(), ReplicaHealthSchema);
export type HealthMap = z.infer<typeof HealthMapSchema>;

/**
 * The monitor's answer to a router's report of a slow call (`reportSuspect`):
 * `replaced`: the replica no longer serves its partition (the router abandons the call);
 * `answering`: a probe sent after the report was answered (busy, not failed: keep waiting);
 * `undecided`: neither within the router's call timeout.
 */
const SuspectVerdictSchema = z.enum(["replaced", "answering", "undecided"]);
export type SuspectVerdict = z.infer<typeof SuspectVerdictSchema>;
