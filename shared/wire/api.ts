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
});
export type DataflowView = z.infer<typeof DataflowViewSchema>;

export const PutDataflowResponseSchema = z.object({ status: z.enum(["created", "unchanged"]), dataflow: DataflowViewSchema });
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
});

/** `GET /v1/status`. */
export const StatusResponseSchema = z.object({
  dataflows: z.array(
    z.object({
      id: z.string(),
      stream: z.string(),
      ready: z.boolean(),
      partitions: z.array(
        z.object({
          partition: z.number().int(),
          epoch: z.number().int(),
          status: PartitionViewSchema.shape.status,
          version: z.number().int(),
          recovery: z.object({ replica: z.string(), phase: z.string(), startedAt: z.string().nullable() }).nullable(),
          replicas: z.array(ReplicaViewSchema),
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
  dataflows: z.array(z.object({ id: z.string(), stream: z.string(), partitions: z.array(z.string()), events: z.array(z.string()) })),
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
