/**
 * The dataflow spec accepted by `PUT /v1/dataflows/{id}` and stored by the registry and the dataflow's monitor.
 * Unknown fields are rejected at the HTTP boundary so typos never pass silently.
 */
import * as z from "zod";
import { FieldPathSchema } from "../field-path.ts";
import { FilterSchema, StoredFilterSchema } from "./filter.ts";

/** The characters of {@link NameSchema}'s names (its length is checked apart). */
const NAME_PATTERN = /^(?!__)[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/**
 * Names of streams, dataflows and aggregates: letters, digits, `_`, `-`, `.`, at most 64,
 * starting with a letter, digit or `_` (so never `.` or `..` in a path), but not with `__`
 * (`__proto__` and friends would be dropped silently by object records). One regular expression, so the OpenAPI document states exactly this rule.
 */
export const NameSchema = z
  .string()
  .max(64)
  .regex(NAME_PATTERN, "use letters, digits, '_', '-' or '.', starting with a letter, digit or '_' but not '__' (at most 64)");

/** Whether {@link NameSchema} accepts `value`, told without running it (the ingest route checks each batch's stream so). */
export function isName(value: string): boolean {
  return value.length <= 64 && NAME_PATTERN.test(value);
}

/**
 * How a spec names fields: `field`, a field it reads (a path into the event, or with
 * `project` an output field), and `projected`, an output field of `project`.
 */
interface FieldNames {
  field: z.ZodType<string>;
  projected: z.ZodType<string>;
  filter: typeof FilterSchema;
}

/** For new specs: paths without empty names, output fields without `.` (issue 11). */
const STRICT_NAMES: FieldNames = { field: FieldPathSchema, projected: z.string().max(128).regex(/^[^.]+$/, "an output field name without '.'"), filter: FilterSchema };

/** For stored specs: any name accepted before issue 11 still loads, so a stored dataflow never stops parsing. */
const STORED_NAMES: FieldNames = { field: z.string().min(1).max(256), projected: z.string().min(1).max(128), filter: StoredFilterSchema };

/** Most upstream dataflows one stage reads (`from`). */
const MAX_SOURCES = 8;

/** Most entries a `topk` summary tracks. */
const MAX_TOPK_CAPACITY = 1_000;

/**
 * One aggregate of a window. `count` takes no field; `sum`/`min`/`max`/`avg` a numeric
 * field; `distinct` estimates the number of distinct values of a field (HyperLogLog,
 * 2^precision registers, relative standard error 1.04/√(2^precision): 1.6 % at the
 * default 12); `topk` reports the `k` most frequent values of a field (or heaviest, by
 * the numeric `weight` field), tracked in a Space-Saving summary of `capacity` entries.
 */
const aggregateSpecSchema = (field: z.ZodType<string>) =>
  z.discriminatedUnion("op", [
    z.strictObject({ op: z.literal("count") }),
    z.strictObject({ op: z.enum(["sum", "min", "max", "avg"]), field }),
    z.strictObject({ op: z.literal("distinct"), field, precision: z.number().int().min(4).max(14).default(12) }),
    z
      .strictObject({
        op: z.literal("topk"),
        field,
        k: z.number().int().min(1).max(100),
        weight: field.optional(),
        capacity: z.number().int().min(1).max(MAX_TOPK_CAPACITY).optional(),
      })
      .refine((a) => a.capacity === undefined || a.capacity >= a.k, { message: "capacity must be at least k", path: ["capacity"] }),
  ]);
export type AggregateSpec = z.output<ReturnType<typeof aggregateSpecSchema>>;

/** Tumbling event-time windows of `sizeMs`, closed once the watermark passes their end plus lateness. */
const DurationSchema = z.number().int().min(1).max(366 * 86_400_000);
const LatenessSchema = z.number().int().min(0).max(366 * 86_400_000).default(0);

/** Most windows one record may fall into (sliding windows: sizeMs / slideMs). */
const MAX_WINDOWS_PER_RECORD = 60;

/**
 * Event-time windows. Tumbling: [k·size, (k+1)·size). Sliding: windows of `sizeMs`
 * starting every `slideMs`, which must divide `sizeMs` (at most 60 windows per record).
 */
const WindowSpecSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("tumbling"), sizeMs: DurationSchema, allowedLatenessMs: LatenessSchema }),
  z
    .strictObject({ kind: z.literal("sliding"), sizeMs: DurationSchema, slideMs: DurationSchema, allowedLatenessMs: LatenessSchema })
    .refine((w) => w.sizeMs % w.slideMs === 0, { message: "slideMs must divide sizeMs", path: ["slideMs"] })
    .refine((w) => w.sizeMs / w.slideMs <= MAX_WINDOWS_PER_RECORD, { message: `sizeMs / slideMs must be at most ${MAX_WINDOWS_PER_RECORD}`, path: ["slideMs"] }),
]);

const ParamScalarSchema = z.union([z.string().max(1_000), z.number(), z.boolean(), z.null()]);

/**
 * A custom operator from the registry (`shared/operators/registry.ts`) and its parameters:
 * an object of scalars or arrays of scalars, checked by the operator's own schema.
 */
const OperatorRefSchema = z.strictObject({ name: NameSchema, params: z.record(z.string(), z.union([ParamScalarSchema, z.array(ParamScalarSchema).max(1_000)])).default({}) });

/** Named aggregates of one window: 1 to `most`. */
const aggregatesSchema = (field: z.ZodType<string>, most: number) =>
  z
    .record(NameSchema, aggregateSpecSchema(field))
    .refine((aggregates) => Object.keys(aggregates).length > 0, "at least one aggregate")
    .refine((aggregates) => Object.keys(aggregates).length <= most, `at most ${most} aggregates`)
    .meta({ minProperties: 1, maxProperties: most });

/**
 * A windowed equi-join of the two dataflows in `from` (issue 27): per key and window,
 * `left` aggregates over the first one's results and `right` over the second's; once the
 * window closes, one result with both sides' values where both had results (`inner`), or
 * where the left side had (`left`; the right side's values are then those of no results).
 */
const joinSchema = (field: z.ZodType<string>) =>
  z.strictObject({
    kind: z.enum(["inner", "left"]).default("inner"),
    left: aggregatesSchema(field, 16),
    right: aggregatesSchema(field, 16),
  });
export type JoinSpec = z.output<ReturnType<typeof joinSchema>>;

/** A whole dataflow's structure, with fields named as `names` says. */
const specStructure = (names: FieldNames) =>
  z.strictObject({
  /** The stream whose posted events this dataflow reads (or `from` instead). */
  stream: NameSchema.optional(),
  /**
   * A stage (issue 27): the dataflow(s) whose closed-window results this one reads instead
   * of a stream; several (a union) must key alike. Each result arrives as the event
   * `{ key, windowStartMs, windowEndMs, values }` at event time `windowEndMs − 1`.
   */
  from: z.union([NameSchema, z.array(NameSchema).min(1).max(MAX_SOURCES)]).optional(),
  /** Only events passing this filter (on the fields as posted) are counted; the others are dropped by the router. */
  filter: names.filter.optional(),
  /** Output field → dotted path in the posted event. When set, key, time and aggregate fields name output fields. */
  project: z
    .record(names.projected, names.field)
    .refine((p) => Object.keys(p).length > 0 && Object.keys(p).length <= 64, "between 1 and 64 fields")
    .optional(),
  /** One field, or several: then the key is the JSON array of their values as strings, e.g. `["10.0.0.1","443"]`. */
  key: z.union([names.field, z.array(names.field).min(1).max(8)]),
  timeField: names.field.optional(),
  window: WindowSpecSchema.optional(),
  aggregates: aggregatesSchema(names.field, 32).optional(),
  /** Instead of `aggregates`, for a stage reading exactly two dataflows: a windowed join of their results. */
  join: joinSchema(names.field).optional(),
  operator: OperatorRefSchema.optional(),
  /**
   * For idle partitions: the monitor writes a clock tick into every partition's log each
   * heartbeat, advancing event time to at least (wall-clock time − idleAdvanceMs).
   */
  idleAdvanceMs: z.number().int().min(0).max(366 * 86_400_000).optional(),
  partitions: z.number().int().min(1).max(64).default(4),
  replication: z.union([z.literal(1), z.literal(2)]).default(2),
});

/**
 * A whole dataflow: stream → [filter] → [project] → keyBy(key) → window → aggregates,
 * or → a custom operator instead of window and aggregates; over P partitions and R replicas.
 * This is the structure, as stored and shown: reading a stored spec never depends on
 * which operators are registered now, nor on name rules added later. `DataflowSpecSchema` (`shared/dataflow-checks/`) adds the checks.
 */
export const StoredDataflowSpecSchema = specStructure(STORED_NAMES);

/**
 * A new spec's structure: field paths checked (no empty names, output fields without `.`).
 * `DataflowSpecSchema` (`shared/dataflow-checks/`) adds the rules that need the operator
 * registry, which `wire/` does not import (issue 26).
 */
export const DataflowSpecStructureSchema = specStructure(STRICT_NAMES);
export type DataflowSpec = z.output<typeof StoredDataflowSpecSchema>;

/** The upstream dataflows a stage reads, in the order the spec names them (a dataflow fed by a stream: none). */
export function sourcesOf(spec: Pick<DataflowSpec, "from">): string[] {
  if (spec.from === undefined) return [];
  return typeof spec.from === "string" ? [spec.from] : [...new Set(spec.from)];
}

/** The aggregates whose values a dataflow's results carry: its `aggregates`, or a join's two sides' (none for a custom operator). */
export function aggregatesOf(spec: Pick<DataflowSpec, "aggregates" | "join">): Record<string, AggregateSpec> | undefined {
  return spec.join ? { ...spec.join.left, ...spec.join.right } : spec.aggregates;
}

/** What a dataflow reads, for messages: `stream 'clicks'` or `dataflow 'page-counts'` (several: `dataflows 'a', 'b'`). */
export function inputOf(spec: Pick<DataflowSpec, "stream" | "from">): string {
  const sources = sourcesOf(spec);
  if (sources.length === 0) return `stream '${spec.stream ?? "?"}'`;
  return `${sources.length === 1 ? "dataflow" : "dataflows"} ${sources.map((s) => `'${s}'`).join(", ")}`;
}
