/**
 * `GET /v1/status`: per dataflow its partitions (epoch, status, recovery) and replicas
 * (role, epoch, LSNs, lag, location hint, last heartbeat), plus recent fail-overs and
 * recoveries, whether fault injection is on, and refused ingest requests per minute.
 * Replicas are asked live, with a deadline; one that does not answer says so.
 */
import { Hono } from "hono";
import { zValidator } from "@hono/zod-validator";
import { ingestStatsStub, replicaStub, withDeadline } from "../../platform/object-calls.ts";
import { StatusQuerySchema, type StatusResponse } from "../../shared/wire/api.ts";
import { summarizeStatus } from "../../shared/status-summary.ts";
import { onInvalid } from "../http-errors.ts";
import type { ReplicaStatus } from "../../shared/wire/replica-rpc.ts";
import type { DataflowRecord, HealthMap } from "../../shared/wire/routing.ts";
import type { AppEnv } from "../app-env.ts";
import { sourcesOf } from "../../shared/wire/dataflow-spec.ts";
import { edgesInto, pipelineOf } from "../../shared/stages/pipeline-status.ts";
import { keepRunning, listDataflows, reportFailure } from "../cluster.ts";
import { dataflowOfReplica } from "../../shared/names.ts";
import { canReadDataflow } from "../../shared/tokens/access.ts";
import { groupsPerPartition, keyGroupMapOf } from "../../shared/keygroups/key-groups.ts";

const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(ms).toISOString());

export const statusRoutes = new Hono<AppEnv>().get("/", zValidator("query", StatusQuerySchema, onInvalid), async (c) => {
  const { view = "full", pretty } = c.req.valid("query");
  // A read token sees only the dataflows it names.
  const found = await listDataflows(c.env, c.var.config, (entry) => canReadDataflow(c.var.principal, entry.id));
  const records = found.map(({ record }) => record);
  const timeoutMs = c.var.config.probeTimeoutMs * 4;
  const ask = async (name: string, hint: string | null): Promise<ReplicaStatus | { error: string }> => {
    // The hint matters when this call is the first to reach a fresh replica: it places it.
    const stub = replicaStub(c.env, name, hint);
    try {
      const status = await withDeadline(async () => stub.status(), timeoutMs, `replica ${name}`);
      return status ?? { error: "no state (never initialised, or storage lost)" };
    } catch (err) {
      // Its monitor probes at once rather than at its next due time (issue 29: the data path watches healthy dataflows).
      reportFailure(c.env, keepRunning(c), [dataflowOfReplica(name)], name);
      // In the product's words: what it means and what happens next (the runtime's text follows).
      const reason = err instanceof Error ? err.message : String(err);
      return { error: `unreachable: did not answer within ${timeoutMs} ms or failed (crashed, hung or restarting; the monitor fails it over if it stays down): ${reason}` };
    }
  };
  // A read token sees the refusals of its dataflows' streams only.
  const streams = new Set(records.flatMap((r) => (r.spec.stream === undefined ? [] : [r.spec.stream])));
  const everything = c.var.principal.kind !== "scoped" || c.var.principal.claims.scope === "admin";
  const [described, refusals] = await Promise.all([
    Promise.all(found.map(async ({ record, health }) => describe(record, health, ask))),
    withDeadline(async () => ingestStatsStub(c.env).refusals(), timeoutMs, "ingest stats").then(
      (rows) => rows.filter((row) => everything || streams.has(row.stream)).map(({ minuteStartMs, ...row }) => ({ at: new Date(minuteStartMs).toISOString(), ...row })),
      () => null,
    ),
  ]);
  // Edges between stages from both ends' primaries (issue 27): what one produced, what the other holds.
  const views = described.map(({ view }) => view);
  const dataflows = described.map(({ dataflow, view }) => ({ ...dataflow, edges: edgesInto(view, views) }));
  const body: StatusResponse = { pipeline: pipelineOf(views), dataflows, faultsEnabled: c.var.config.enableFaults, refusals };
  const shown = view === "summary" ? summarizeStatus(body) : body;
  // Indented for people reading it in a terminal; compact unless asked, or for the summary.
  if (pretty === "true" || (view === "summary" && pretty !== "false")) return c.body(`${JSON.stringify(shown, null, 2)}\n`, 200, { "content-type": "application/json" });
  return c.json(shown);
});

async function describe(record: DataflowRecord, health: HealthMap, ask: (name: string, hint: string | null) => Promise<ReplicaStatus | { error: string }>) {
  const primaries: (ReplicaStatus | null)[] = record.routes.map(() => null);
  const groups = keyGroupMapOf(record);
  const owned = groupsPerPartition(groups);
  const partitions = await Promise.all(
      record.routes.map(async (route) => {
        const names = [route.primary, ...(route.standby ? [route.standby] : []), ...(route.recovery ? [route.recovery.replica] : [])];
        const statuses = await Promise.all(names.map((name) => ask(name, route.hints[name] ?? null)));
        const first = statuses[0];
        primaries[route.partition] = first && "role" in first && first.role === "primary" ? first : null;
        const primaryLsn = (statuses[0] && "lsn" in statuses[0] ? statuses[0].lsn : null) ?? null;
        return {
          partition: route.partition,
          keyGroups: owned[route.partition] ?? 0,
          epoch: route.epoch,
          status: route.status,
          version: route.version,
          recovery: route.recovery && { replica: route.recovery.replica, phase: route.recovery.phase, startedAt: iso(route.recovery.startedAtMs) },
          replicas: names.map((name, i) => {
            const live = statuses[i] ?? { error: "unknown" };
            const seen = health[name];
            const lag = "lsn" in live && primaryLsn !== null ? Math.max(0, primaryLsn - live.lsn) : null;
            return {
              name,
              ...live,
              lag,
              locationHint: route.hints[name] ?? null,
              lastHeartbeat: iso(seen?.lastOkAtMs),
              missedProbes: seen?.misses ?? 0,
              eventsPerSecond: seen?.eventsPerSecond ?? null,
            };
          }),
        };
      }),
  );
  const dataflow = {
    id: record.id,
    stream: record.spec.stream ?? null,
    from: sourcesOf(record.spec),
    readers: record.readers,
    ready: record.ready,
    keyGroups: groups.groups,
    partitions,
    moves: record.moves.map(({ id, groups: moved, from, to, phase, startedAtMs, releasedAtMs }) => ({ id, groups: moved, from, to, phase, startedAt: iso(startedAtMs), releasedAt: iso(releasedAtMs) })),
    events: record.events.map(({ atMs, ...event }) => ({ at: iso(atMs), ...event })),
  };
  return { dataflow, view: { id: record.id, spec: record.spec, primaries } };
}
