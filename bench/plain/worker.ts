/**
 * The plain baseline of issue 12, as a competent user would write it in an afternoon: a
 * Worker that validates a batch with the product's own router code, hash-splits it over P
 * Durable Objects, and each object aggregates its sub-batch in memory (the product's own
 * window operator) and inserts it as one SQLite row, replayed on start. No replication, no
 * dedup, no checkpoints. `POST /v1/streams/{stream}/events?partitions=P` ingests;
 * `GET /v1/streams/{stream}/count?partitions=P` sums the counts; `GET /v1/admin/counters`
 * has the product's shape (calls by method, rows read and written, Worker requests).
 */
import { DurableObject } from "cloudflare:workers";
import { routeEvents } from "../../shared/ingest/route-events.ts";
import { windowAggregate } from "../../shared/operators/window-aggregate.ts";
import { DataflowSpecSchema } from "../../shared/dataflow-checks/dataflow-spec-schema.ts";
import type { FluxRecord, WindowResult } from "../../shared/wire/window-result.ts";
import { baselineFetch, countCall, counted, countedExec, json } from "../baseline/http.ts";
import { defaultKeyGroupMap } from "../../shared/keygroups/key-groups.ts";

interface PlainEnv {
  PLAIN_PARTITION: DurableObjectNamespace<PlainPartition>;
  FLUX_API_TOKEN: string;
  FLUX_ADMIN_TOKEN: string;
}

/** The query the bench runs on Flux, hard-coded as a user's own code would have it. */
const SPEC = DataflowSpecSchema.parse({
  stream: "plain",
  key: "page",
  timeField: "ts",
  window: { kind: "tumbling", sizeMs: 60_000, allowedLatenessMs: 86_400_000 },
  aggregates: { n: { op: "count" }, bytes: { op: "sum", field: "bytes" } },
  partitions: 1,
});
const OPERATOR = windowAggregate(SPEC);

export class PlainPartition extends DurableObject<PlainEnv> {
  #state = OPERATOR.init();
  #results: WindowResult[] = [];

  constructor(ctx: DurableObjectState, env: PlainEnv) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    this.#exec("CREATE TABLE IF NOT EXISTS batches (id INTEGER PRIMARY KEY, records TEXT NOT NULL)");
    this.#exec("CREATE TABLE IF NOT EXISTS results (id INTEGER PRIMARY KEY, result TEXT NOT NULL)");
    const replay = sql.exec<{ records: string }>("SELECT records FROM batches ORDER BY id");
    for (const row of replay) this.#state = OPERATOR.process(this.#state, JSON.parse(row.records) as FluxRecord[], () => {});
    counted.rowsRead += replay.rowsRead;
  }

  /** Aggregates one sub-batch and stores it (and any closed window) in one implicit transaction. */
  ingest(records: FluxRecord[]): { events: number } {
    this.#state = OPERATOR.process(this.#state, records, (r) => this.#results.push(r));
    this.#exec("INSERT INTO batches (records) VALUES (?)", JSON.stringify(records));
    for (const r of this.#results.splice(0)) this.#exec("INSERT INTO results (result) VALUES (?)", JSON.stringify(r));
    return { events: records.length };
  }

  /** Events counted in open windows (the bench's windows never close). */
  count(): number {
    return OPERATOR.openResults(this.#state, {}).reduce((n, r) => n + Number(r.values.n), 0);
  }

  #exec(query: string, ...bindings: unknown[]): void {
    countedExec(this.ctx.storage.sql, query, ...bindings);
  }
}

async function ingest(env: PlainEnv, stream: string, partitions: number, events: unknown[]): Promise<Response> {
  let byPartition: Map<number, FluxRecord[]>;
  try {
    byPartition = routeEvents({ ...SPEC, partitions }, events, Date.now(), 256, defaultKeyGroupMap(partitions));
  } catch (err) {
    return json({ error: { code: "INVALID_EVENT", message: err instanceof Error ? err.message : String(err) } }, 400);
  }
  await Promise.all(
    [...byPartition].map(([p, records]) => {
      countCall("ingest");
      return env.PLAIN_PARTITION.getByName(`${stream}/p${p}`).ingest(records);
    }),
  );
  return json({ accepted: events.length });
}

const countOf = (env: PlainEnv, stream: string, p: number) => env.PLAIN_PARTITION.getByName(`${stream}/p${p}`).count();

export default { fetch: baselineFetch({ ingest, countOf }) } satisfies ExportedHandler<PlainEnv>;
