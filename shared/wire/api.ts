/**
 * Response bodies of the HTTP API, as zod schemas: routes build values of these types,
 * and the OpenAPI document (`shared/openapi.ts`) is generated from the same schemas.
 */
import * as z from "zod";
import { StoredDataflowSpecSchema } from "./dataflow-spec.ts";
import { ReplicaStatusSchema } from "./replica-rpc.ts";
import { StreamRecordSchema } from "./stream-schema.ts";
import { WindowResultSchema } from "./window-result.ts";

const PartitionViewSchema = z.object({
  partition: z.number().int(),
  epoch: z.number().int(),
  primary: z.string(),
  standby: z.string().nullable(),
  status: z.enum(["healthy", "degraded", "recovering", "unavailable"]),
});

/** A dataflow as the API shows it. */
const DataflowViewSchema = z.object({
  id: z.string(),
  spec: StoredDataflowSpecSchema,
  createdAt: z.string(),
  ready: z.boolean(),
  deleting: z.boolean(),
  partitions: z.array(PartitionViewSchema),
  /** The stages reading its results (issue 27). */
  readers: z.array(z.string()),
});
export type DataflowView = z.infer<typeof DataflowViewSchema>;

/**
 * Where a stage starts reading one upstream (issue 27): from its first result, so the
 * `resultsSoFar` it had emitted when the stage was created are delivered first (null: a
 * partition of it did not answer just then).
 */
const StageStartSchema = z.object({ dataflow: z.string(), resultsSoFar: z.number().int().nullable() });

/**
 * `starts`: per upstream of a stage, where it starts (empty for a dataflow reading a
 * stream); `warnings`: what may hold a stage's windows back (an upstream fed by a stream
 * without `idleAdvanceMs`), for a person to act on. `rescaling` (202): only the partition
 * count changed, and key groups are moving to the new partitions (issue 28).
 */
export const PutDataflowResponseSchema = z.object({
  status: z.enum(["created", "unchanged", "rescaling"]),
  dataflow: DataflowViewSchema,
  starts: z.array(StageStartSchema),
  warnings: z.array(z.string()),
});
export const DataflowResponseSchema = z.object({ dataflow: DataflowViewSchema });
export const DataflowListResponseSchema = z.object({ dataflows: z.array(DataflowViewSchema) });
export const DeleteDataflowResponseSchema = z.object({ dataflow: z.string(), status: z.enum(["deleted", "deleting"]), pending: z.array(z.string()) });

/** A page of results; `next` is the cursor for the following page, null on the last. */
export const ResultsResponseSchema = z.object({ dataflow: z.string(), results: z.array(WindowResultSchema), next: z.string().nullable() });
export type ResultsResponse = z.infer<typeof ResultsResponseSchema>;

const ReplicaViewSchema = ReplicaStatusSchema.partial().extend({
  name: z.string(),
  error: z.string().optional(),
  lag: z.number().int().nullable(),
  locationHint: z.string().nullable(),
  lastHeartbeat: z.string().nullable(),
  missedProbes: z.number().int(),
  /** Records applied per second between the monitor's last two answered probes (issue 28); null until it has two, or after a restart between them. */
  eventsPerSecond: z.number().nullable(),
});

/**
 * One edge into a stage (issue 27): from partition `upstreamPartition` of `upstream` to
 * the stage's `partition`; results the upstream partition `produced`, `delivered` on this
 * edge since its primary took over, and that the stage `acknowledged` (holds on both
 * replicas); `lag` = produced − acknowledged. Null where the replica did not answer.
 */
const EdgeViewSchema = z.object({
  upstream: z.string(),
  upstreamPartition: z.number().int(),
  partition: z.number().int(),
  produced: z.number().int().nullable(),
  delivered: z.number().int().nullable(),
  acknowledged: z.number().int().nullable(),
  lag: z.number().int().nullable(),
});

/** The pipeline graph: streams (`stream:NAME`) and dataflows, and who reads whom. */
const PipelineSchema = z.object({
  nodes: z.array(z.object({ id: z.string(), kind: z.enum(["stream", "dataflow"]) })),
  edges: z.array(z.object({ from: z.string(), to: z.string() })),
});

/** `GET /v1/status`. */
export const StatusResponseSchema = z.object({
  pipeline: PipelineSchema,
  dataflows: z.array(
    z.object({
      id: z.string(),
      /** The stream it reads, or null for a stage (issue 27), which reads `from`. */
      stream: z.string().nullable(),
      /** The dataflows whose results it reads (a stage), else empty. */
      from: z.array(z.string()),
      /** The stages reading its results. */
      readers: z.array(z.string()),
      /** A stage's edges from every upstream partition to every partition of it, else empty. */
      edges: z.array(EdgeViewSchema),
      ready: z.boolean(),
      /** How many key groups its keys hash to (issue 28): 256 for a dataflow created since, 16 per partition before. */
      keyGroups: z.number().int(),
      partitions: z.array(
        z.object({
          partition: z.number().int(),
          /** How many of the key groups this partition owns. */
          keyGroups: z.number().int(),
          epoch: z.number().int(),
          status: PartitionViewSchema.shape.status,
          version: z.number().int(),
          recovery: z.object({ replica: z.string(), phase: z.string(), startedAt: z.string().nullable() }).nullable(),
          replicas: z.array(ReplicaViewSchema),
        }),
      ),
      /**
       * Key-group moves under way (issue 28), in the order they run: the phase each is in
       * (release, adopt, switch, forget; return when given up), when it was asked for, and
       * since when its groups' records wait (null: not yet released). Ended moves are events
       * (`move-finished`, `move-given-up`) naming how long their records waited.
       */
      moves: z.array(
        z.object({
          id: z.number().int(),
          groups: z.array(z.number().int()),
          from: z.number().int(),
          to: z.number().int(),
          phase: z.string(),
          startedAt: z.string().nullable(),
          releasedAt: z.string().nullable(),
        }),
      ),
      events: z.array(z.object({ at: z.string().nullable(), partition: z.number().int(), kind: z.string(), detail: z.string() })),
    }),
  ),
  /** Whether `POST /v1/admin/replicas/{name}/fault` exists (FLUX_ENABLE_FAULTS). */
  faultsEnabled: z.boolean(),
  /** Refused ingest requests per minute (`at`: its start), stream and code, last 10 minutes; null if the counts could not be read. */
  refusals: z.array(z.object({ at: z.string(), stream: z.string(), code: z.string(), count: z.number().int() })).nullable(),
});
export type StatusResponse = z.infer<typeof StatusResponseSchema>;

/** The query of `GET /v1/status`: `view=summary` for one line per partition, `pretty=true` for indented JSON. */
export const StatusQuerySchema = z.strictObject({
  view: z.enum(["full", "summary"]).optional(),
  pretty: z.enum(["true", "false"]).optional(),
});

/** `GET /v1/status?view=summary`: per dataflow one line per partition and the latest events; refusals one line each. */
export const StatusSummaryResponseSchema = z.object({
  pipeline: z.array(z.string()),
  dataflows: z.array(z.object({ id: z.string(), stream: z.string().nullable(), from: z.array(z.string()), partitions: z.array(z.string()), edges: z.array(z.string()), events: z.array(z.string()) })),
  faultsEnabled: z.boolean(),
  refusals: z.array(z.string()).nullable(),
});
export type StatusSummaryResponse = z.infer<typeof StatusSummaryResponseSchema>;

export const FaultResponseSchema = z.object({ replica: z.string(), fault: z.string().nullable(), injected: z.string() });

export const PutStreamResponseSchema = z.object({ status: z.enum(["created", "updated", "unchanged"]), stream: StreamRecordSchema });
export const StreamResponseSchema = z.object({ stream: StreamRecordSchema });
export const StreamListResponseSchema = z.object({ streams: z.array(StreamRecordSchema) });

/** `GET /v1/operators`: the registered custom operators and the JSON Schema of their parameters. */
export const OperatorListResponseSchema = z.object({
  operators: z.array(z.object({ name: z.string(), description: z.string(), params: z.record(z.string(), z.unknown()) })),
});
export type OperatorListResponse = z.infer<typeof OperatorListResponseSchema>;
