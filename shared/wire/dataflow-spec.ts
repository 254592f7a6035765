/**
 * The dataflow spec accepted by `PUT /v1/dataflows/{id}` and stored by the coordinator.
 * Unknown fields are rejected at the HTTP boundary so typos never pass silently.
 */
import { z } from "zod";
import { FilterSchema } from "./filter.ts";

/** Names of streams, dataflows, fields and aggregates: letters, digits, `_`, `-`, `.`. */
export const NameSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/, "use letters, digits, '_', '-' or '.'")
  // `__proto__` and friends would be dropped silently by object records.
  .refine((name) => !name.startsWith("__"), "must not start with '__'");

const FieldNameSchema = z.string().min(1).max(128);

/** One aggregate of a window: `count` takes no field, the others a numeric field. */
const AggregateSpecSchema = z.discriminatedUnion("op", [
  z.strictObject({ op: z.literal("count") }),
  z.strictObject({ op: z.enum(["sum", "min", "max", "avg"]), field: FieldNameSchema }),
]);

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

/** A whole dataflow: stream → keyBy(key) → window → aggregates, over P partitions and R replicas. */
export const DataflowSpecSchema = z.strictObject({
  stream: NameSchema,
  /** One field, or several: then the key is the JSON array of their values as strings, e.g. `["10.0.0.1","443"]`. */
  key: z.union([FieldNameSchema, z.array(FieldNameSchema).min(1).max(8)]),
  timeField: FieldNameSchema.optional(),
  /** Only events passing this filter are counted; the others are dropped by the router. */
  filter: FilterSchema.optional(),
  window: WindowSpecSchema,
  aggregates: z
    .record(NameSchema, AggregateSpecSchema)
    .refine((aggregates) => Object.keys(aggregates).length > 0, "at least one aggregate")
    .refine((aggregates) => Object.keys(aggregates).length <= 32, "at most 32 aggregates"),
  partitions: z.number().int().min(1).max(64).default(4),
  replication: z.union([z.literal(1), z.literal(2)]).default(2),
});
export type DataflowSpec = z.output<typeof DataflowSpecSchema>;

/** Numeric fields that the spec's aggregates read, in a stable order. */
export function numericFieldsOf(spec: Pick<DataflowSpec, "aggregates">): string[] {
  const fields = new Set<string>();
  for (const aggregate of Object.values(spec.aggregates)) {
    if (aggregate.op !== "count") fields.add(aggregate.field);
  }
  return [...fields].sort();
}
