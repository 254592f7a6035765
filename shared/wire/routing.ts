/** The coordinator's durable records: dataflows and their routing tables (DESIGN.md §4). */
import { z } from "zod";
import { DataflowSpecSchema } from "./dataflow-spec.ts";

/** Health of a partition as the coordinator sees it. */
const PartitionStatusSchema = z.enum(["healthy", "degraded", "recovering", "unavailable"]);

/** Routing for one partition: which replica is primary, which standby, in which epoch. */
const PartitionRouteSchema = z.object({
  partition: z.number().int().min(0),
  epoch: z.number().int().min(1),
  primary: z.string(),
  standby: z.string().nullable(),
  status: PartitionStatusSchema,
  /** Bumped on every change of this route. */
  version: z.number().int().min(1),
});
export type PartitionRoute = z.infer<typeof PartitionRouteSchema>;

/** A dataflow as stored: its spec and routing table. `ready` once every replica was initialised. */
export const DataflowRecordSchema = z.object({
  v: z.literal(1),
  id: z.string(),
  spec: DataflowSpecSchema,
  createdAtMs: z.number(),
  ready: z.boolean(),
  routes: z.array(PartitionRouteSchema),
});
export type DataflowRecord = z.infer<typeof DataflowRecordSchema>;
