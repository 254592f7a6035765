/** The registry's stream declarations in its key-value storage (see `shared/wire/stream-schema.ts`). */
import type { RegistryEntry } from "../shared/wire/registry.ts";
import { specProblems } from "../shared/dataflow-checks/stream-schema-fit.ts";
import { StreamRecordSchema, type SchemaProblem, type StreamRecord, type StreamSchema } from "../shared/wire/stream-schema.ts";

const STREAM = "stream:";

/** Outcome of declaring a stream's schema. */
export type PutStreamResult = { status: "created" | "updated" | "unchanged"; stream: StreamRecord } | { status: "conflict"; conflicts: StreamConflict[] };

/** One dataflow reading the stream that a new schema would not fit, and why. */
export type StreamConflict = { dataflow: string; problems: SchemaProblem[] };

export function readStream(kv: SyncKvStorage, name: string): StreamRecord | null {
  const value = kv.get(STREAM + name);
  return value === undefined ? null : StreamRecordSchema.parse(value);
}

export function listStreams(kv: SyncKvStorage): StreamRecord[] {
  return [...kv.list({ prefix: STREAM })].map(([, value]) => StreamRecordSchema.parse(value));
}

/**
 * Declares (or replaces) a stream's schema. Refused while any of `dataflows` reading the
 * stream would no longer fit it (every such dataflow is named); nothing changes then.
 */
export function declareStream(kv: SyncKvStorage, name: string, schema: StreamSchema, dataflows: readonly RegistryEntry[]): PutStreamResult {
  const existing = readStream(kv, name);
  if (existing && JSON.stringify(existing.schema) === JSON.stringify(schema)) return { status: "unchanged", stream: existing };
  const conflicts = dataflows
    .filter((record) => !record.deleting && record.spec.stream === name)
    .map((record) => ({ dataflow: record.id, problems: specProblems(schema, record.spec) }))
    .filter((conflict) => conflict.problems.length > 0);
  if (conflicts.length > 0) return { status: "conflict", conflicts };
  const stream: StreamRecord = { name, schema, updatedAt: new Date().toISOString() };
  kv.put(STREAM + name, stream);
  return { status: existing ? "updated" : "created", stream };
}
