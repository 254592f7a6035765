/**
 * Validates posted events against a dataflow spec and splits them into per-partition
 * sub-batches of compact records (`[key, timeMs, ...record fields]`): filter on the event
 * as posted, then project, then read key, time and the operator's fields, every field by
 * path (`shared/field-path.ts`). Either every event is valid and routed (or filtered
 * out), or nothing is: the caller sends nothing on an error.
 */
import { FluxError } from "../errors.ts";
import { partitionOfKey, type KeyGroupMap } from "../keygroups/key-groups.ts";
import { recordFieldsOf } from "../operators/compile.ts";
import type { DataflowSpec } from "../wire/dataflow-spec.ts";
import { compileFilter } from "../wire/filter.ts";
import { fieldReader, ownFieldReader } from "../field-path.ts";
import type { FluxRecord } from "../wire/window-result.ts";
import { shown } from "../http/describe-issues.ts";

/** At most this many problems are listed in an error's details. */
export const MAX_REPORTED_PROBLEMS = 20;

/**
 * Largest magnitude accepted for an aggregated field: sums of many such values stay
 * finite (an infinite sum could not be checkpointed and would wedge the partition).
 */
export const MAX_FIELD_MAGNITUDE = 1e15;

/** How far past the router's clock an event time may lie, ms: one far-future event would otherwise close every window. */
export const MAX_FUTURE_MS = 86_400_000;

/** One invalid field of one event. `index` is the event's 0-based position in the batch. */
export interface EventProblem {
  index: number;
  field: string;
  problem: string;
}

/**
 * Routes `events` for one dataflow. `receivedAtMs` stamps event time when the spec has
 * no `timeField`. Keys are strings or finite numbers (compared as strings); times are
 * epoch ms or ISO-8601 strings, from 1970 to {@link MAX_FUTURE_MS} past `receivedAtMs`;
 * aggregated fields are numbers within ±{@link MAX_FIELD_MAGNITUDE}. A key goes to the
 * partition that owns its key group under `groups` (the dataflow's, `keyGroupMapOf`).
 * @returns sub-batches by partition (only partitions that received records).
 * @throws FluxError `INVALID_EVENT` listing the first problems found.
 */
export function routeEvents(
  spec: DataflowSpec,
  events: readonly unknown[],
  receivedAtMs: number,
  maxKeyLength: number,
  groups: KeyGroupMap,
): Map<number, FluxRecord[]> {
  const { fields, projection, filter, readTime, keyReaders } = readersOf(spec);
  const problems: EventProblem[] = [];
  let problemCount = 0;
  const report = (index: number, field: string, problem: string) => {
    problemCount += 1;
    if (problems.length < MAX_REPORTED_PROBLEMS) problems.push({ index, field, problem });
  };
  const byPartition = new Map<number, FluxRecord[]>();
  events.forEach((event, index) => {
    if (typeof event !== "object" || event === null || Array.isArray(event)) {
      report(index, "", "event must be a JSON object");
      return;
    }
    const posted = event as Record<string, unknown>;
    if (filter && !filter(posted)) return;
    const obj = projection ? project(posted, projection) : posted;
    const key = compositeKeyOf(obj, keyReaders, typeof spec.key !== "string", maxKeyLength, (field, problem) => report(index, field, problem));
    const timeMs = readTime === null ? receivedAtMs : timeOf(readTime(obj));
    if (timeMs === null) report(index, spec.timeField ?? "", "must be epoch milliseconds or an ISO-8601 date-time with a zone, such as 2026-12-01T08:48:00Z");
    else if (timeMs < 0 || timeMs > receivedAtMs + MAX_FUTURE_MS) report(index, spec.timeField ?? "", "must be after 1970 and at most 24 h in the future");
    const record: FluxRecord = [typeof key === "string" ? key : "", timeMs ?? 0];
    pushFields(record, obj, fields, maxKeyLength, (field, problem) => report(index, field, problem));
    if (problemCount > 0 || typeof key !== "string") return;
    const partition = partitionOfKey(groups, key);
    let batch = byPartition.get(partition);
    if (!batch) byPartition.set(partition, (batch = []));
    batch.push(record);
  });
  if (problemCount > 0) throw new FluxError("INVALID_EVENT", `${problemCount} problem(s) in the batch; nothing was applied`, { problems, problemCount });
  return byPartition;
}

type Reader = (event: unknown) => unknown;

/**
 * Everything routing reads from an event, each field path split once per batch. With a
 * projection, key, time and operator fields name its output fields, read whole.
 */
function readersOf(spec: DataflowSpec) {
  const keyFields = typeof spec.key === "string" ? [spec.key] : spec.key;
  const reader = spec.project ? ownFieldReader : fieldReader;
  return {
    fields: recordFieldsOf(spec).map(({ name, type }) => ({ name, type, read: reader(name) })),
    projection: spec.project ? Object.entries(spec.project).map(([name, path]) => ({ name, read: fieldReader(path) })) : null,
    filter: spec.filter ? compileFilter(spec.filter) : null,
    readTime: spec.timeField === undefined ? null : reader(spec.timeField),
    keyReaders: keyFields.map((field) => ({ field, read: reader(field) })),
  };
}

/** Appends the operator's fields to `record`: strings (or numbers as text), or finite numbers within ±{@link MAX_FIELD_MAGNITUDE}. */
function pushFields(
  record: FluxRecord,
  obj: Readonly<Record<string, unknown>>,
  fields: readonly { name: string; type: "number" | "string"; read: Reader }[],
  maxKeyLength: number,
  report: (field: string, problem: string) => void,
): void {
  for (const { name, type, read } of fields) {
    const value = read(obj);
    if (type === "string") {
      if (typeof value === "string" && value.length <= maxKeyLength) record.push(value);
      else if (typeof value === "number" && Number.isFinite(value)) record.push(String(value));
      else report(name, `must be a string of at most ${maxKeyLength} characters or a finite number`);
    } else if (typeof value !== "number" || !Number.isFinite(value)) report(name, "must be a finite number");
    else if (Math.abs(value) > MAX_FIELD_MAGNITUDE) report(name, "must be between -1e15 and 1e15");
    else record.push(value);
  }
}

/** The event as the projection sees it: each output field (a plain name) from its path (absent paths stay absent). */
function project(event: Readonly<Record<string, unknown>>, projection: readonly { name: string; read: Reader }[]): Record<string, unknown> {
  // No prototype: nothing inherited can be read back as an output field.
  const out = Object.create(null) as Record<string, unknown>;
  for (const { name, read } of projection) {
    const value = read(event);
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/** The record key: one field's value, or (`composite`) the JSON array of several fields' values (all as strings). */
function compositeKeyOf(
  event: Readonly<Record<string, unknown>>,
  fields: readonly { field: string; read: Reader }[],
  composite: boolean,
  maxKeyLength: number,
  report: (field: string, problem: string) => void,
): string | { problem: string } {
  // One field, the usual case: no per-event array on the hot path.
  const only = fields[0];
  if (!composite && only) {
    const key = keyOf(only.read(event), maxKeyLength);
    if (typeof key !== "string") report(only.field, key.problem);
    return key;
  }
  const parts = fields.map(({ field, read }) => {
    const part = keyOf(read(event), maxKeyLength);
    if (typeof part !== "string") report(field, part.problem);
    return part;
  });
  if (parts.some((p) => typeof p !== "string")) return { problem: "invalid key" };
  const key = JSON.stringify(parts);
  if (key.length > maxKeyLength) {
    report(fields.map((f) => f.field).join(","), tooLong(maxKeyLength));
    return { problem: "key too long" };
  }
  return key;
}

function keyOf(value: unknown, maxKeyLength: number): string | { problem: string } {
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (typeof value !== "string") return { problem: `key must be a string or a finite number${value === undefined ? " (missing)" : `, got ${shown(value)}`}` };
  if (value.length === 0) return { problem: "key must not be empty" };
  if (value.length > maxKeyLength) return { problem: tooLong(maxKeyLength) };
  // Half a surrogate pair (valid as a JSON escape) has no UTF-8 form, so storage could not keep the key.
  if (LONE_SURROGATE.test(value)) return { problem: "key must be well-formed Unicode (no lone surrogate)" };
  return value;
}

/** A key's length is in UTF-16 code units (JavaScript's `length`), which the message says. */
function tooLong(maxKeyLength: number): string {
  return `key longer than ${maxKeyLength} characters (UTF-16 code units: an emoji counts 2)`;
}

/** In `u` mode, matches only surrogates that are not part of a pair. */
const LONE_SURROGATE = /\p{Cs}/u;

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

function timeOf(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value !== "string" || !ISO_DATE_TIME.test(value)) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}
