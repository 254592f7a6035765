/**
 * The control plane's records (issue 29). Each dataflow's routing table, probe history and
 * alarm live in its own monitor object; the registry (the object named "coordinator") keeps
 * only what creating, deleting and listing dataflows needs: one entry per dataflow; each
 * stream's directory object holds what a router needs before it routes a batch.
 */
import { z } from "zod";
import { StoredDataflowSpecSchema } from "./dataflow-spec.ts";
import type { StreamSchema } from "./stream-schema.ts";

/** The registry's entry for one dataflow: its spec, and whether it is being deleted. */
export const RegistryEntrySchema = z.object({
  v: z.literal(1),
  id: z.string(),
  spec: StoredDataflowSpecSchema,
  createdAtMs: z.number(),
  deleting: z.boolean(),
});
export type RegistryEntry = z.infer<typeof RegistryEntrySchema>;

/**
 * A stream's directory: the dataflows reading it (not being deleted), sorted, and its declared
 * schema. `synced` is false while the registry never wrote it (a stream from before the
 * upgrade, not yet migrated, or one nobody declared or reads).
 */
export interface StreamDirectoryState {
  members: string[];
  schema: StreamSchema | null;
  synced: boolean;
}
