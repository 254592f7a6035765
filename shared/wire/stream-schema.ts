/**
 * Declared stream schemas (DESIGN.md §3, issue 6): `PUT /v1/streams/{stream}` declares
 * the fields events carry and their types. Routers then validate every posted event
 * with a zod schema built from the declaration (one bad event refuses the whole batch),
 * and a dataflow may only read declared fields of a suitable type
 * (`shared/dataflow-checks/stream-schema-fit.ts`). Streams without a declaration accept
 * any JSON object, as before.
 */
import * as z from "zod";
import { FieldPathSchema, splitFieldPath } from "../field-path.ts";
import { shown } from "../http/describe-issues.ts";

const FieldTypeSchema = z.enum(["string", "number", "integer", "boolean", "time", "object", "array"]);
/** A declared field's type. */
export type FieldType = z.infer<typeof FieldTypeSchema>;

/** Names of `Object.prototype` members: a declared field of such a name would read an inherited value where it is absent. */
const PROTOTYPE_NAMES = Object.getOwnPropertyNames(Object.prototype).map((name) => name.replace(/[$]/g, "\\$&")).join("|");

/**
 * A field name or dotted path into nested objects, such as `flow.src`: the same paths specs
 * read (`shared/field-path.ts`), with no name of an `Object.prototype` member.
 */
const PathSchema = FieldPathSchema.regex(
  new RegExp(`^(?!(.*\\.)?(${PROTOTYPE_NAMES})(\\.|$))`),
  "must not use a name of Object.prototype (such as __proto__ or constructor)",
);

/** The body of `PUT /v1/streams/{stream}`. */
export const StreamSchemaSchema = z.strictObject({
  /** Field path → type; `time` is epoch milliseconds or an ISO-8601 date-time; required unless `required: false`. */
  fields: z
    .record(PathSchema, z.strictObject({ type: FieldTypeSchema, required: z.boolean().default(true) }))
    .refine((fields) => Object.keys(fields).length >= 1 && Object.keys(fields).length <= 200, "between 1 and 200 fields")
    .meta({ minProperties: 1, maxProperties: 200 })
    .superRefine((fields, ctx) => {
      for (const path of Object.keys(fields)) {
        const parts = splitFieldPath(path);
        for (let i = 1; i < parts.length; i++) {
          const parent = parts.slice(0, i).join(".");
          const declared = Object.hasOwn(fields, parent) ? fields[parent] : undefined;
          if (declared && declared.type !== "object") ctx.addIssue({ code: "custom", path: [path], message: `'${parent}' is declared as ${declared.type}, not object` });
        }
      }
    }),
  /** Whether events may carry fields that are not declared (at every declared level). */
  additionalFields: z.boolean().default(true),
});
export type StreamSchema = z.output<typeof StreamSchemaSchema>;

/** A stream as the registry stores it and the API shows it. */
export const StreamRecordSchema = z.object({
  name: z.string(),
  schema: StreamSchemaSchema,
  updatedAt: z.string(),
});
export type StreamRecord = z.infer<typeof StreamRecordSchema>;

const TIME_EXPECTED = "must be epoch milliseconds (at least 0) or an ISO-8601 date-time with a zone, such as 2026-12-01T08:48:00Z";
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

const leafSchema: Record<FieldType, () => z.ZodType> = {
  string: () => z.string(),
  number: () => z.number(),
  // A string or other non-number is told an integer is wanted, not just "a number".
  integer: () =>
    z.int({ error: (iss) => (iss.code === "invalid_type" && typeof iss.input !== "number" ? `must be an integer${iss.input === undefined ? " (missing)" : `, got ${shown(iss.input)}`}` : undefined) }),
  boolean: () => z.boolean(),
  time: () =>
    z.union([z.number().min(0), z.string().regex(ISO_DATE_TIME, TIME_EXPECTED)], { error: TIME_EXPECTED }),
  object: () => z.record(z.string(), z.unknown()),
  array: () => z.array(z.unknown()),
};

interface Node {
  type?: FieldType;
  required: boolean;
  children: Map<string, Node>;
}

/** The zod schema of one event of `schema` (nested objects for dotted paths). */
export function eventSchemaOf(schema: StreamSchema): z.ZodType {
  const root: Node = { required: true, children: new Map() };
  for (const [path, field] of Object.entries(schema.fields)) {
    let node = root;
    for (const part of splitFieldPath(path)) {
      let child = node.children.get(part);
      if (!child) node.children.set(part, (child = { required: false, children: new Map() }));
      // A required field makes the objects holding it required too.
      if (field.required) child.required = true;
      node = child;
    }
    node.type = field.type;
  }
  const build = (node: Node): z.ZodType => {
    if (node.children.size === 0) return leafSchema[node.type ?? "object"]();
    const shape: Record<string, z.ZodType> = {};
    for (const [name, child] of node.children) shape[name] = child.required ? build(child) : build(child).optional();
    return schema.additionalFields ? z.looseObject(shape) : z.strictObject(shape);
  };
  return build(root);
}

/** Why a dataflow spec does not fit a stream's schema, at a path of the spec. */
export interface SchemaProblem {
  path: (string | number)[];
  message: string;
}

/** Problems as one line of an error message: `path: message; path: message`. */
export function describeProblems(problems: readonly SchemaProblem[]): string {
  return problems.map((p) => `${p.path.join(".")}: ${p.message}`).join("; ");
}
