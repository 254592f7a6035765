/**
 * Creating a dataflow (DESIGN.md §3): validation before comparison (issue 26), its
 * routing table, every replica configured, then — for a stage (issue 27) — the link that
 * makes its upstreams' primaries deliver to it. Re-sending the same spec finishes a
 * creation that was interrupted, links included.
 */
import type { FluxConfig } from "../shared/config.ts";
import { stageProblems } from "../shared/dataflow-checks/stage-input.ts";
import { specProblems } from "../shared/dataflow-checks/stream-schema-fit.ts";
import { desiredConfigs } from "../shared/monitor/desired-config.ts";
import type { MonitorPort } from "../shared/monitor/monitor-port.ts";
import { isSameSpec, planDataflow } from "../shared/plan-dataflow.ts";
import { sourcesOf, type DataflowSpec } from "../shared/wire/dataflow-spec.ts";
import type { DataflowRecord } from "../shared/wire/routing.ts";
import type { SchemaProblem } from "../shared/wire/stream-schema.ts";
import type { MonitorRecords } from "./monitor-records.ts";
import { linkStage, stageStarts, type StageStart } from "./stage-links.ts";
import { readStream } from "./stream-store.ts";

/** Outcome of creating a dataflow; a stage's also says where it starts reading each upstream. */
export type PutDataflowResult =
  | { status: "created" | "unchanged"; record: DataflowRecord; starts: StageStart[]; warnings: string[] }
  | { status: "conflict"; record: DataflowRecord }
  | { status: "deleting"; record: DataflowRecord }
  | { status: "invalid"; problems: SchemaProblem[] };

/** What creation needs from the coordinator. */
export interface CreationContext {
  kv: SyncKvStorage;
  records: MonitorRecords;
  config: FluxConfig;
  port(records: DataflowRecord[]): MonitorPort;
  /** A replica missed its configuration: the monitor should look at it now. */
  report(replica: string): Promise<void>;
  armMonitor(atMs: number): Promise<void>;
}

/** Creates dataflow `id`, or confirms an identical one; a different spec under an existing id is a conflict. */
export async function putDataflow(o: CreationContext, id: string, spec: DataflowSpec): Promise<PutDataflowResult> {
  const problems = inputProblems(o, id, spec);
  if (problems.length > 0) return { status: "invalid", problems };
  const existing = o.records.read(id);
  if (existing?.deleting) return { status: "deleting", record: existing };
  if (existing && !isSameSpec(existing.spec, spec)) return { status: "conflict", record: existing };
  const firstEpoch = o.records.tombstone(id) + 1;
  const record = existing ?? planDataflow(id, spec, Date.now(), o.config.locationHints, firstEpoch);
  if (!existing) o.records.put(record);
  const port = o.port([record, ...sourcesOf(spec).flatMap((u) => o.records.read(u) ?? [])]);
  if (!record.ready) {
    await Promise.all(
      record.routes.flatMap((route) =>
        desiredConfigs(record, route).map(async (init) => {
          const reply = await port.configure(init.name, { ...init, create: true });
          if (reply.status !== "ok") throw new Error(`replica ${init.name} refused its configuration: ${reply.status}`);
        }),
      ),
    );
    record.ready = true;
    o.records.put(record);
    await o.armMonitor(Date.now() + o.config.heartbeatMs);
  }
  const starts = sourcesOf(spec).length === 0 ? [] : await stageStarts(o.records, port, record);
  for (const replica of await linkStage(o.records, port, record, true)) await o.report(replica);
  return { status: existing?.ready ? "unchanged" : "created", record, starts, warnings: clockWarnings(o.records, spec) };
}

/**
 * What may hold a stage's windows back (issue 27): a stream-fed dataflow it reads,
 * directly or through other stages, without clock ticks, whose partitions without events
 * claim no watermark.
 */
function clockWarnings(records: MonitorRecords, spec: DataflowSpec, seen = new Set<string>()): string[] {
  return sourcesOf(spec).flatMap((id) => {
    if (seen.has(id)) return [];
    seen.add(id);
    const upstream = records.read(id);
    if (!upstream) return [];
    if (upstream.spec.from !== undefined) return clockWarnings(records, upstream.spec, seen);
    if (upstream.spec.idleAdvanceMs !== undefined) return [];
    return [`dataflow '${id}' has no idleAdvanceMs: this stage's windows close only once every partition of '${id}' has seen events past them (set idleAdvanceMs on '${id}' so idle partitions move on; docs/PIPELINES.md)`];
  });
}

/** The stages reading `id` (issue 27): every dataflow naming it in `from` that is not being deleted. */
export function readersOf(records: MonitorRecords, id: string): DataflowRecord[] {
  return records.list().filter((r) => !r.deleting && sourcesOf(r.spec).includes(id));
}

/**
 * Validation before comparison (issue 26): a spec that does not fit its stream's schema,
 * or a stage's upstreams' results, is invalid whether or not the id exists, is being
 * deleted or holds another spec.
 */
function inputProblems(o: CreationContext, id: string, spec: DataflowSpec): SchemaProblem[] {
  const sources = sourcesOf(spec);
  if (sources.length > 0) return stageProblems(id, spec, sources, (name) => o.records.read(name));
  const declared = spec.stream === undefined ? null : readStream(o.kv, spec.stream);
  return declared ? specProblems(declared.schema, spec) : [];
}
