/**
 * What the bench's two baselines (`bench/plain/`, `bench/simple/`) share: their counters,
 * kept per isolate in the product's shape (`GET /v1/admin/counters`), and their HTTP front:
 * bearer tokens, `POST /v1/streams/{stream}/events?partitions=P` to ingest and
 * `GET /v1/streams/{stream}/count?partitions=P` to sum the counts.
 */

interface Tokens {
  FLUX_API_TOKEN: string;
  FLUX_ADMIN_TOKEN: string;
}

// Per isolate, like the product's counters (locally one isolate runs the Worker and every object).
const calls = new Map<string, number>();
export const counted = { rowsRead: 0, rowsWritten: 0, workerRequests: 0 };

/** Counts one call of an object's method. */
export const countCall = (method: string) => calls.set(method, (calls.get(method) ?? 0) + 1);

/** Runs a SQL statement to its end, counting the rows it read and wrote. */
export function countedExec(sql: SqlStorage, query: string, ...bindings: unknown[]): void {
  const cursor = sql.exec(query, ...bindings);
  cursor.toArray();
  counted.rowsRead += cursor.rowsRead;
  counted.rowsWritten += cursor.rowsWritten;
}

export const json = (body: unknown, status = 200) => Response.json(body, { status });

function readCounters() {
  const byMethod = Object.fromEntries([...calls].sort(([a], [b]) => a.localeCompare(b)));
  return { calls: byMethod, callsTotal: [...calls.values()].reduce((a, b) => a + b, 0), ...counted };
}

/** A baseline's own part, behind the shared front: how it ingests a batch and what one of its objects counts. */
interface Baseline<E> {
  /** Ingests a batch the front has read as a JSON array (a 400 of its own for a bad event). */
  ingest(env: E, stream: string, partitions: number, events: unknown[]): Promise<Response>;
  /** Events counted by the stream's object of partition `p`. */
  countOf(env: E, stream: string, p: number): Promise<number>;
}

/** The batch as a JSON array, or the 400 that refuses it. */
async function jsonArray(request: Request): Promise<unknown[] | Response> {
  let events: unknown;
  try {
    events = await request.json();
  } catch {
    return json({ error: { code: "INVALID_JSON", message: "body is not valid JSON" } }, 400);
  }
  return Array.isArray(events) ? events : json({ error: { code: "INVALID_REQUEST", message: "body must be a JSON array" } }, 400);
}

/** Sums the counts of the stream's P objects, one counted `count` call each. */
async function countAll<E>(baseline: Baseline<E>, env: E, stream: string, partitions: number): Promise<Response> {
  const counts = await Promise.all(
    Array.from({ length: partitions }, (_, p) => {
      countCall("count");
      return baseline.countOf(env, stream, p);
    }),
  );
  return json({ events: counts.reduce((a, b) => a + b, 0) });
}

/** The Worker's `fetch`: counters for the admin token, ingest and count for the API token. */
export function baselineFetch<E extends Tokens>(baseline: Baseline<E>) {
  return async (request: Request, env: E): Promise<Response> => {
    counted.workerRequests += 1;
    const url = new URL(request.url);
    const auth = request.headers.get("authorization");
    if (url.pathname === "/v1/admin/counters") {
      return auth === `Bearer ${env.FLUX_ADMIN_TOKEN}` ? json(readCounters()) : json({ error: { code: "UNAUTHORIZED", message: "admin token needed" } }, 401);
    }
    if (auth !== `Bearer ${env.FLUX_API_TOKEN}`) return json({ error: { code: "UNAUTHORIZED", message: "bearer token needed" } }, 401);
    const match = /^\/v1\/streams\/([A-Za-z0-9_-]{1,64})\/(events|count)$/.exec(url.pathname);
    const partitions = Number(url.searchParams.get("partitions") ?? "1");
    if (!match || !Number.isInteger(partitions) || partitions < 1 || partitions > 256) {
      return json({ error: { code: "NOT_FOUND", message: `no route for ${request.method} ${url.pathname}` } }, 404);
    }
    const [, stream = "", action] = match;
    if (action === "events" && request.method === "POST") {
      const events = await jsonArray(request);
      return events instanceof Response ? events : baseline.ingest(env, stream, partitions, events);
    }
    if (action === "count" && request.method === "GET") return countAll(baseline, env, stream, partitions);
    return json({ error: { code: "METHOD_NOT_ALLOWED", message: `${request.method} not allowed` } }, 405);
  };
}
