/**
 * The simpler baseline of issue 30: the design an outside tester wrote in an afternoon,
 * simpler than `bench/plain/`. The Worker checks each event with a hand-written loop,
 * hash-splits the batch over P Durable Objects and sends each its sub-batch as the JSON text
 * of the events; each object parses that text, counts and sums per key in a `Map` per
 * window (no window operator, no records re-serialized) and inserts the text it received
 * as one SQLite row, replayed on start. No replication, no dedup, no checkpoints, no
 * window closing. Same API as `bench/plain/`: `POST /v1/streams/{stream}/events?partitions=P`
 * ingests; `GET /v1/streams/{stream}/count?partitions=P` sums the counts;
 * `GET /v1/admin/counters` has the product's shape.
 */
import { DurableObject } from "cloudflare:workers";
import { partitionFor } from "../../shared/partitioner.ts";
import { baselineFetch, countCall, counted, countedExec, json } from "../baseline/http.ts";

interface SimpleEnv {
  SIMPLE_PARTITION: DurableObjectNamespace<SimplePartition>;
  FLUX_API_TOKEN: string;
  FLUX_ADMIN_TOKEN: string;
}

/** The bench's events: `{ page, ts, bytes }`. */
interface PageEvent {
  page: string;
  ts: number;
  bytes: number;
}

/** The query the bench runs on Flux (count and sum of `bytes` per page, 1-minute tumbling windows), hard-coded. */
const WINDOW_MS = 60_000;

export class SimplePartition extends DurableObject<SimpleEnv> {
  /** Window start → page → count and sum. */
  readonly #windows = new Map<number, Map<string, { n: number; bytes: number }>>();

  constructor(ctx: DurableObjectState, env: SimpleEnv) {
    super(ctx, env);
    this.#exec("CREATE TABLE IF NOT EXISTS batches (id INTEGER PRIMARY KEY, events TEXT NOT NULL)");
    const replay = ctx.storage.sql.exec<{ events: string }>("SELECT events FROM batches ORDER BY id");
    for (const row of replay) this.#add(row.events);
    counted.rowsRead += replay.rowsRead;
  }

  /** Counts one sub-batch (the JSON text of its events) and stores the text as received. */
  ingest(text: string): { events: number } {
    const events = this.#add(text);
    this.#exec("INSERT INTO batches (events) VALUES (?)", text);
    return { events };
  }

  /** Events counted in every window. */
  count(): number {
    let n = 0;
    for (const pages of this.#windows.values()) for (const page of pages.values()) n += page.n;
    return n;
  }

  #add(text: string): number {
    const events = JSON.parse(text) as PageEvent[];
    for (const e of events) {
      const start = Math.floor(e.ts / WINDOW_MS) * WINDOW_MS;
      let pages = this.#windows.get(start);
      if (!pages) this.#windows.set(start, (pages = new Map()));
      const page = pages.get(e.page);
      if (page) {
        page.n += 1;
        page.bytes += e.bytes;
      } else pages.set(e.page, { n: 1, bytes: e.bytes });
    }
    return events.length;
  }

  #exec(query: string, ...bindings: unknown[]): void {
    countedExec(this.ctx.storage.sql, query, ...bindings);
  }
}

/** Whether `e` is a bench event: a page name, a finite time and a finite byte count. */
function isPageEvent(e: unknown): e is PageEvent {
  if (typeof e !== "object" || e === null) return false;
  const { page, ts, bytes } = e as Record<string, unknown>;
  return typeof page === "string" && page.length > 0 && Number.isFinite(ts) && Number.isFinite(bytes);
}

async function ingest(env: SimpleEnv, stream: string, partitions: number, events: unknown[]): Promise<Response> {
  const byPartition = new Map<number, PageEvent[]>();
  for (const [i, e] of events.entries()) {
    if (!isPageEvent(e)) return json({ error: { code: "INVALID_EVENT", message: `event ${i} needs a page, a numeric ts and numeric bytes` } }, 400);
    const p = partitionFor(e.page, partitions);
    const list = byPartition.get(p);
    if (list) list.push(e);
    else byPartition.set(p, [e]);
  }
  await Promise.all(
    [...byPartition].map(([p, list]) => {
      countCall("ingest");
      return env.SIMPLE_PARTITION.getByName(`${stream}/p${p}`).ingest(JSON.stringify(list));
    }),
  );
  return json({ accepted: events.length });
}

const countOf = (env: SimpleEnv, stream: string, p: number) => env.SIMPLE_PARTITION.getByName(`${stream}/p${p}`).count();

export default { fetch: baselineFetch({ ingest, countOf }) } satisfies ExportedHandler<SimpleEnv>;
