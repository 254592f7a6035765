/**
 * The routing directory of one stream (issue 29): which dataflows read it and its declared
 * schema, written by the registry when a dataflow reading it is created or deleted or its
 * schema is declared. Routers read it (cached per isolate for `FLUX_ROUTING_CACHE_MS`), then
 * each member's routing from that dataflow's monitor: no object shared by every stream is
 * on the ingest path.
 */
import { DurableObject } from "cloudflare:workers";
import { z } from "zod";
import { StreamSchemaSchema } from "../shared/wire/stream-schema.ts";
import type { StreamDirectoryState } from "../shared/wire/registry.ts";
import { countedKv } from "../platform/counted-sql.ts";

const KEY = "directory";

const StoredSchema = z.object({ v: z.literal(1), members: z.array(z.string()), schema: StreamSchemaSchema.nullable() });

export class StreamDirectory extends DurableObject<Env> {
  readonly #kv = countedKv(this.ctx.storage.kv);
  /** What is stored, parsed once per instance. */
  #state: StreamDirectoryState | null = null;

  /** What a router needs first: the stream's readers and schema. */
  async routing(): Promise<StreamDirectoryState> {
    if (!this.#state) {
      const parsed = StoredSchema.safeParse(this.#kv.get(KEY));
      this.#state = parsed.success ? { members: parsed.data.members, schema: parsed.data.schema, synced: true } : { members: [], schema: null, synced: false };
    }
    return this.#state;
  }

  /** Replaces the directory (the registry's view of the stream); a repeat writes nothing. */
  async set(members: string[], schema: StreamDirectoryState["schema"]): Promise<void> {
    const current = await this.routing();
    if (current.synced && JSON.stringify([current.members, current.schema]) === JSON.stringify([members, schema])) return;
    this.#kv.put(KEY, { v: 1, members, schema });
    this.#state = { members, schema, synced: true };
  }
}
