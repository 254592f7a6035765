/**
 * IngestStats: one object counting refused ingest requests per minute, stream and code
 * for the dashboard (issue 13). Routers report each refusal without waiting for it; the
 * counts live in this object's storage, so they survive its eviction. Logic: shared/ingest/refusal-counts.ts.
 */
import { DurableObject } from "cloudflare:workers";
import { addRefusal, recentRefusals } from "../shared/ingest/refusal-counts.ts";
import { StoredRefusalCountsSchema, type RefusalCount } from "../shared/wire/ingest-stats.ts";
import { countedKv } from "../platform/counted-sql.ts";

const KEY = "refusals";

export class IngestStats extends DurableObject<Env> {
  /** Storage with every key read and written counted (issue 12). */
  readonly #kv = countedKv(this.ctx.storage.kv);

  /** Counts one refused `POST /v1/streams/{stream}/events` with its error code. */
  async countRefusal(stream: string, code: string): Promise<void> {
    this.#kv.put(KEY, { v: 1, counts: addRefusal(this.#read(), stream, code, Date.now()) });
  }

  /** The counts of the last minutes, oldest first. */
  async refusals(): Promise<RefusalCount[]> {
    return recentRefusals(this.#read(), Date.now());
  }

  #read(): RefusalCount[] {
    const stored = StoredRefusalCountsSchema.safeParse(this.#kv.get(KEY));
    // Unreadable counts (an older layout) are dropped: they only feed a chart.
    return stored.success ? stored.data.counts : [];
  }
}
