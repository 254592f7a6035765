/**
 * How Worker routes reach the Durable Objects (issue 29): the registry for creating,
 * deleting and listing (failures become a retryable 503, never a 500); each dataflow's
 * monitor and each stream's directory for routing, through the per-isolate caches;
 * replicas with deadlines. While a monitor or directory is down, cached routing keeps ingest going.
 */
import type { DeadlineTimer } from "../platform/deadline-timer.ts";
import { coordinatorStub, ingestStatsStub, monitorStub, withDeadline } from "../platform/object-calls.ts";
import { lookupDataflow, lookupStream } from "../platform/control-plane.ts";
import { replicaPort as replicaPortWithDeadline } from "../platform/replica-ports.ts";
import type { FluxConfig } from "../shared/config.ts";
import { FluxError } from "../shared/errors.ts";
import { dataflowOfReplica } from "../shared/names.ts";
import { reportingSlowCalls } from "./slow-call-report.ts";
import type { DataflowCache } from "../shared/router/dataflow-cache.ts";
import type { RoutingCache, StreamRouting } from "../shared/router/routing-cache.ts";
import { WriteCoalescer } from "../shared/router/write-coalescer.ts";
import type { ReplicaPort } from "../shared/router/write-partition.ts";
import type { DataflowRecord, HealthMap, SuspectVerdict } from "../shared/wire/routing.ts";
import type { RegistryEntry } from "../shared/wire/registry.ts";

/** Calls the registry; if it cannot answer, a retryable 503. */
export async function askRegistry<T>(env: Env, run: (registry: ReturnType<typeof coordinatorStub>) => Promise<T>): Promise<T> {
  try {
    return await run(coordinatorStub(env));
  } catch (err) {
    throw notAnswering("the registry (which creates, deletes and lists dataflows and streams)", err);
  }
}

/** The 503 for a control-plane object that did not answer, in the product's words (the runtime's text goes to details). */
function notAnswering(what: string, err: unknown): FluxError {
  const reason = err instanceof Error ? err.message : String(err);
  return new FluxError("UNAVAILABLE", `${what} did not answer; it restarts by itself: retry in a moment`, { reason }, { cause: err });
}

/** Dataflow `id`'s record from its monitor (null: none); if the monitor cannot answer, a retryable 503. */
export async function findDataflow(env: Env, config: FluxConfig, id: string): Promise<DataflowRecord | null> {
  try {
    return await lookupDataflow(env, id, config.replicaTimeoutMs);
  } catch (err) {
    throw notAnswering(`the monitor of dataflow '${id}' (which holds its routing)`, err);
  }
}

/**
 * A dataflow that can be read from (present and not being deleted; otherwise 404), from the
 * isolate's cache unless `fresh`. `cached`: whether it came from the cache (a read it
 * refuses is worth one retry with a fresh record).
 */
export async function readableDataflow(env: Env, config: FluxConfig, cache: DataflowCache, id: string, fresh = false): Promise<{ record: DataflowRecord; cached: boolean }> {
  const now = Date.now();
  const cached = fresh ? undefined : cache.get(id, now);
  const record = cached ?? (await findDataflow(env, config, id));
  if (!cached) cache.set(id, record, now);
  if (!record || record.deleting) throw new FluxError("UNKNOWN_DATAFLOW", `no dataflow '${id}'`);
  return { record, cached: cached !== undefined };
}

/** Every dataflow the registry lists, each with its routing and health from its monitor (those whose monitor has no record are gone). */
export async function listDataflows(env: Env, config: FluxConfig, keep: (entry: RegistryEntry) => boolean = () => true): Promise<{ record: DataflowRecord; health: HealthMap }[]> {
  const entries = (await askRegistry(env, (registry) => registry.listDataflows())).filter(keep);
  const views = await Promise.all(
    entries.map(async ({ id }) => {
      try {
        return await withDeadline(() => monitorStub(env, id).view(), config.replicaTimeoutMs, `the monitor of dataflow '${id}'`);
      } catch (err) {
        throw notAnswering(`the monitor of dataflow '${id}' (which holds its routing)`, err);
      }
    }),
  );
  return views.filter((view) => view !== null);
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

/** The revoked token ids (issue 26), bounded by the replica timeout; if the registry cannot answer, a retryable 503. */
export function fetchRevokedTokens(env: Env, config: FluxConfig): Promise<string[]> {
  return askRegistry(env, (registry) => withDeadline(() => registry.revokedTokens(), config.replicaTimeoutMs, "the registry"));
}

/**
 * Tells the monitor of `replica`'s dataflow that a call to it failed, so it probes now (no
 * replica named: the monitors of all of `dataflows`); never fails the request.
 */
export function reportFailure(env: Env, waitUntil: (promise: Promise<unknown>) => void, dataflows: readonly string[], replica?: string): void {
  for (const id of replica === undefined ? dataflows : [dataflowOfReplica(replica)]) {
    waitUntil(monitorStub(env, id).reportFailure(replica).catch(() => undefined));
  }
}

/** Tells the monitor of `replica`'s dataflow that a call to it is slow; resolves to its verdict (`undecided` if it cannot answer). */
export function reportSuspect(env: Env, waitUntil: (promise: Promise<unknown>) => void, replica: string): Promise<SuspectVerdict> {
  const verdict = monitorStub(env, dataflowOfReplica(replica))
    .reportSuspect(replica)
    .catch((): SuspectVerdict => "undecided");
  waitUntil(verdict);
  return verdict;
}

/**
 * Ready dataflows reading `stream` and its declared schema, from the cache unless `fresh`
 * or expired; else from the stream's directory and its members' monitors. If one of them
 * cannot answer, stale cached routing is used rather than failing.
 */
export async function routeStream(env: Env, config: FluxConfig, cache: RoutingCache, stream: string, fresh: boolean): Promise<StreamRouting> {
  const now = Date.now();
  const cached = fresh ? undefined : cache.get(stream, now);
  if (cached) return cached;
  let routing: StreamRouting;
  try {
    routing = await lookupStream(env, stream, config.replicaTimeoutMs);
  } catch (err) {
    const stale = cache.get(stream, Number.NEGATIVE_INFINITY);
    if (stale) return stale;
    throw notAnswering(`the routing of stream '${stream}' (its directory, or a monitor of a dataflow reading it)`, err);
  }
  cache.set(stream, routing, now);
  return routing;
}

/** Keeps promises running after the response (plain `app.request` calls have no execution context: they simply run on their own). */
export function keepRunning(c: { executionCtx: { waitUntil(promise: Promise<unknown>): void } }): (promise: Promise<unknown>) => void {
  return (promise) => {
    try {
      c.executionCtx.waitUntil(promise);
    } catch {
      void promise;
    }
  };
}

/** Counts a refused ingest request for the dashboard; never fails or delays the request. */
export function countRefusal(env: Env, stream: string, code: string, waitUntil: (promise: Promise<unknown>) => void): void {
  waitUntil(ingestStatsStub(env).countRefusal(stream, code).catch(() => undefined));
}
