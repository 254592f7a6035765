/**
 * How Worker routes reach the Durable Objects: the coordinator (failures become a
 * retryable 503, never a 500), replicas with deadlines, and routing through the
 * per-isolate cache. While the coordinator is down, cached routing keeps ingest going.
 */
import type { DeadlineTimer } from "../platform/deadline-timer.ts";
import { coordinatorStub, ingestStatsStub, withDeadline } from "../platform/object-calls.ts";
import { replicaPort as replicaPortWithDeadline } from "../platform/replica-ports.ts";
import type { FluxConfig } from "../shared/config.ts";
import { FluxError } from "../shared/errors.ts";
import { reportingSlowCalls } from "./slow-call-report.ts";
import type { RoutingCache, StreamRouting } from "../shared/router/routing-cache.ts";
import { WriteCoalescer } from "../shared/router/write-coalescer.ts";
import type { ReplicaPort } from "../shared/router/write-partition.ts";
import type { DataflowRecord, SuspectVerdict } from "../shared/wire/routing.ts";

/** Calls the coordinator; if it cannot answer, a retryable 503. */
export async function askCoordinator<T>(env: Env, run: (coordinator: ReturnType<typeof coordinatorStub>) => Promise<T>): Promise<T> {
  try {
    return await run(coordinatorStub(env));
  } catch (err) {
    throw coordinatorDown(err);
  }
}

/** The 503 for a coordinator that did not answer, in the product's words (the runtime's text goes to details). */
function coordinatorDown(err: unknown): FluxError {
  const reason = err instanceof Error ? err.message : String(err);
  return new FluxError(
    "UNAVAILABLE",
    "the coordinator (which holds dataflow specs and routing, and runs the monitor) did not answer; it restarts by itself: retry in a moment",
    { reason },
    { cause: err },
  );
}

/** A dataflow that can be read from: present and not being deleted; otherwise 404. */
export async function readableDataflow(env: Env, id: string): Promise<DataflowRecord> {
  const record = await askCoordinator(env, (co) => co.getDataflow(id));
  if (!record || record.deleting) throw new FluxError("UNKNOWN_DATAFLOW", `no dataflow '${id}'`);
  return record;
}

/**
 * Replica RPCs bounded by the configured replica timeout; with `onSuspect`, a call still
 * unanswered after `FLUX_SUSPECT_MS` is reported through it while the router waits on.
 * Deadlines and slow-call watches share `timer`, the request's own.
 */
export function replicaPort(env: Env, config: FluxConfig, timer: DeadlineTimer, onSuspect?: (replica: string) => Promise<SuspectVerdict>): ReplicaPort {
  const port = replicaPortWithDeadline(env, config.replicaTimeoutMs, timer);
  return onSuspect ? reportingSlowCalls(port, config.suspectMs, onSuspect, timer) : port;
}

/** The isolate's write coalescer: bounds, a 1 ms poll, and a give-up past two calls' worth of replica timeout. */
export function newCoalescer(config: FluxConfig): WriteCoalescer {
  return new WriteCoalescer({ maxBatches: 64, maxChars: 4_000_000, pollMs: 1, giveUpMs: 3 * config.replicaTimeoutMs, staleMs: 2 * config.replicaTimeoutMs, lingerPolls: config.coalesceLingerMs, now: Date.now });
}

/** The revoked token ids (issue 26), bounded by the replica timeout; if the coordinator cannot answer, a retryable 503. */
export function fetchRevokedTokens(env: Env, config: FluxConfig): Promise<string[]> {
  return askCoordinator(env, (co) => withDeadline(() => co.revokedTokens(), config.replicaTimeoutMs, "the coordinator"));
}

/** Tells the monitor a call to `replica` failed, so it probes now; never fails the request. */
export function reportFailure(env: Env, waitUntil: (promise: Promise<unknown>) => void, replica?: string): void {
  waitUntil(coordinatorStub(env).reportFailure(replica).catch(() => undefined));
}

/** Tells the monitor a call to `replica` is slow; resolves to its verdict (`undecided` if it cannot answer). */
export function reportSuspect(env: Env, waitUntil: (promise: Promise<unknown>) => void, replica: string): Promise<SuspectVerdict> {
  const verdict = coordinatorStub(env)
    .reportSuspect(replica)
    .catch((): SuspectVerdict => "undecided");
  waitUntil(verdict);
  return verdict;
}

/**
 * Ready dataflows reading `stream` and its declared schema, from the cache unless `fresh`
 * or expired. If the coordinator cannot answer, stale cached routing is used rather than failing.
 */
export async function routeStream(env: Env, cache: RoutingCache, stream: string, fresh: boolean): Promise<StreamRouting> {
  const now = Date.now();
  const cached = fresh ? undefined : cache.get(stream, now);
  if (cached) return cached;
  let routing: StreamRouting;
  try {
    routing = await coordinatorStub(env).routeStream(stream);
  } catch (err) {
    const stale = cache.get(stream, Number.NEGATIVE_INFINITY);
    if (stale) return stale;
    throw coordinatorDown(err);
  }
  cache.set(stream, routing, now);
  return routing;
}

/** Counts a refused ingest request for the dashboard; never fails or delays the request. */
export function countRefusal(env: Env, stream: string, code: string, waitUntil: (promise: Promise<unknown>) => void): void {
  waitUntil(ingestStatsStub(env).countRefusal(stream, code).catch(() => undefined));
}
