/**
 * Creating and deleting a dataflow, as the registry runs them (issue 29; DESIGN.md §3):
 * validation before comparison (issue 26), then the dataflow's own monitor creates its
 * routing table and configures its replicas, the stream's directory learns it, and — for a
 * stage (issue 27) — each upstream's monitor links it, so the upstream's primaries deliver
 * to it. Every step is idempotent: re-sending the same spec finishes a creation that was
 * interrupted, a repeated DELETE one that was.
 */
import { stageProblems } from "../shared/dataflow-checks/stage-input.ts";
import { specProblems } from "../shared/dataflow-checks/stream-schema-fit.ts";
import { changedFields, isSameSpec } from "../shared/plan-dataflow.ts";
import type { RescaleRefusal } from "../shared/moves/plan-rescale.ts";
import { sourcesOf, type DataflowSpec } from "../shared/wire/dataflow-spec.ts";
import type { DataflowRecord } from "../shared/wire/routing.ts";
import type { SchemaProblem } from "../shared/wire/stream-schema.ts";
import type { RegistryEntries } from "./registry-entries.ts";
import type { AdoptedState, MonitorCreateResult } from "./monitor-steps.ts";
import type { MonitorLookup } from "./dataflow-monitor.ts";
import { readStream } from "./stream-store.ts";

/** Where a new stage starts reading one upstream: from its first result; `resultsSoFar` were emitted before (delivered first). */
interface StageStart {
  dataflow: string;
  resultsSoFar: number | null;
}

/** Outcome of creating a dataflow; a stage's also says where it starts reading each upstream. */
export type PutDataflowResult =
  | { status: "created" | "unchanged" | "rescaling"; record: DataflowRecord; starts: StageStart[]; warnings: string[] }
  | { status: "refused"; record: DataflowRecord; refusal: RescaleRefusal }
  | { status: "conflict"; record: DataflowRecord }
  | { status: "deleting"; record: DataflowRecord }
  | { status: "invalid"; problems: SchemaProblem[] };

/** Outcome of deleting a dataflow; `in-use`: stages read it (`readers`), so it stays. */
export type DeleteDataflowResult =
  | { status: "not-found" }
  | { status: "in-use"; readers: string[] }
  | { status: "deleted" | "deleting"; stream: string | null; pending: string[] };

/** What the registry calls on a dataflow's monitor. */
interface MonitorCalls {
  create(id: string, spec: DataflowSpec): Promise<MonitorCreateResult>;
  lookup(): Promise<MonitorLookup>;
  linkReader(stage: string, add: boolean): Promise<string[]>;
  resultsSoFar(): Promise<number | null>;
  delete(): Promise<{ pending: string[] }>;
  adopt(id: string, state: AdoptedState): Promise<void>;
}

/** What the steps need from the registry object. */
export interface RegistryContext {
  kv: SyncKvStorage;
  entries: RegistryEntries;
  monitor(id: string): MonitorCalls;
  /** Writes stream `stream`'s directory from the entries and its declared schema. */
  syncDirectory(stream: string): Promise<void>;
}

/**
 * Creates dataflow `id`, or confirms an identical one; a spec that differs from the stored
 * one in its partition count alone rescales it (issue 28); any other difference under an
 * existing id is a conflict.
 */
export async function putDataflow(o: RegistryContext, id: string, spec: DataflowSpec): Promise<PutDataflowResult> {
  const problems = inputProblems(o, id, spec);
  if (problems.length > 0) return { status: "invalid", problems };
  let entry = o.entries.read(id);
  if (entry && (entry.deleting || !isSameSpec(entry.spec, spec))) {
    const { record } = await o.monitor(id).lookup();
    // A rescale; or its request retried after the monitor stored it but before this entry was (the entry is repaired below).
    const rescale = record !== null && !entry.deleting && (isSameSpec(record.spec, spec) || changedFields(record.spec, spec).join() === "partitions");
    if (record && !rescale) return { status: entry.deleting ? "deleting" : "conflict", record };
    if (!record) {
      // Its monitor holds nothing: a deletion finished (its note to the registry was lost), or a
      // creation never reached the monitor (nobody was told it exists). The id is free.
      o.entries.remove(id);
      entry = null;
    }
  }
  if (!entry) o.entries.put({ v: 1, id, spec, createdAtMs: Date.now(), deleting: false });
  const created = await o.monitor(id).create(id, spec);
  if (created.status === "deleting" || created.status === "conflict") {
    o.entries.put({ v: 1, id, spec: created.record.spec, createdAtMs: created.record.createdAtMs, deleting: created.record.deleting });
    return { status: created.status, record: created.record };
  }
  if (created.status === "refused") return created;
  if (!isSameSpec(o.entries.read(id)?.spec ?? spec, created.record.spec)) o.entries.put({ v: 1, id, spec: created.record.spec, createdAtMs: created.record.createdAtMs, deleting: false });
  if (spec.stream !== undefined) await o.syncDirectory(spec.stream);
  const sources = sourcesOf(spec);
  const starts = await Promise.all(sources.map(async (dataflow) => ({ dataflow, resultsSoFar: await o.monitor(dataflow).resultsSoFar() })));
  for (const dataflow of sources) await o.monitor(dataflow).linkReader(id, true);
  return { status: created.status, record: created.record, starts, warnings: clockWarnings(o.entries, spec) };
}

/**
 * Deletes a dataflow: routers stop using it at once (its directory first, then its monitor's
 * record); its upstreams stop delivering to it; its replicas drop their state (its monitor
 * retries any that do not answer). @returns the replicas still to confirm.
 */
export async function deleteDataflow(o: RegistryContext, id: string): Promise<DeleteDataflowResult> {
  const entry = o.entries.read(id);
  if (!entry) return { status: "not-found" };
  // A stage reading it would lose its input for good (issue 27): delete the stages first.
  const readers = o.entries.readersOf(id);
  if (readers.length > 0) return { status: "in-use", readers: readers.map((r) => r.id) };
  if (!entry.deleting) o.entries.put({ ...entry, deleting: true });
  if (entry.spec.stream !== undefined) await o.syncDirectory(entry.spec.stream);
  for (const dataflow of sourcesOf(entry.spec)) await o.monitor(dataflow).linkReader(id, false);
  const { pending } = await o.monitor(id).delete();
  if (pending.length === 0) o.entries.remove(id);
  return { status: pending.length === 0 ? "deleted" : "deleting", stream: entry.spec.stream ?? null, pending };
}

/**
 * What may hold a stage's windows back (issue 27): a stream-fed dataflow it reads,
 * directly or through other stages, without clock ticks, whose partitions without events
 * claim no watermark.
 */
function clockWarnings(entries: RegistryEntries, spec: DataflowSpec, seen = new Set<string>()): string[] {
  return sourcesOf(spec).flatMap((id) => {
    if (seen.has(id)) return [];
    seen.add(id);
    const upstream = entries.read(id);
    if (!upstream) return [];
    if (upstream.spec.from !== undefined) return clockWarnings(entries, upstream.spec, seen);
    if (upstream.spec.idleAdvanceMs !== undefined) return [];
    return [`dataflow '${id}' has no idleAdvanceMs: this stage's windows close only once every partition of '${id}' has seen events past them (set idleAdvanceMs on '${id}' so idle partitions move on; docs/PIPELINES.md)`];
  });
}

/**
 * Validation before comparison (issue 26): a spec that does not fit its stream's schema,
 * or a stage's upstreams' results, is invalid whether or not the id exists, is being
 * deleted or holds another spec.
 */
function inputProblems(o: RegistryContext, id: string, spec: DataflowSpec): SchemaProblem[] {
  const sources = sourcesOf(spec);
  if (sources.length > 0) return stageProblems(id, spec, sources, (name) => o.entries.read(name));
  const declared = spec.stream === undefined ? null : readStream(o.kv, spec.stream);
  return declared ? specProblems(declared.schema, spec) : [];
}
