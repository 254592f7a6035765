/**
 * Whether a dataflow spec fits a stream's declared schema (issue 6): every field it reads
 * (`fieldUses`, which asks the operator registry for a custom operator's fields) must be
 * one events can hold, of a suitable type, and required. Here rather than in
 * `wire/stream-schema.ts`, because `wire/` imports nothing of the operators (issue 26).
 */
import { splitFieldPath } from "../field-path.ts";
import { inputOf, type DataflowSpec } from "../wire/dataflow-spec.ts";
import type { FieldType, SchemaProblem, StreamSchema } from "../wire/stream-schema.ts";
import { filterFields } from "../wire/filter.ts";
import { fieldUses } from "./spec-checks.ts";

/**
 * What events of `schema` hold at `path`: a declared type; anything, inside a declared
 * `object` whose fields events may extend; or nothing ever (`never`: why). Only the
 * nearest declared ancestor decides: one of another type holds no fields, and with
 * `additionalFields: false` an object that declares fields of its own holds only those.
 */
type Reach = { kind: "declared"; type: FieldType } | { kind: "undeclared" } | { kind: "inside-object" } | { kind: "never"; why: string };

function reach(schema: StreamSchema, path: string): Reach {
  const declaredAt = (p: string): FieldType | undefined => (Object.hasOwn(schema.fields, p) ? schema.fields[p]?.type : undefined);
  const holdsDeclared = (p: string): boolean => Object.keys(schema.fields).some((field) => field.startsWith(`${p}.`));
  const own = declaredAt(path);
  if (own) return { kind: "declared", type: own };
  const parts = splitFieldPath(path);
  for (let i = parts.length - 1; i >= 1; i--) {
    const parent = parts.slice(0, i).join(".");
    const type = declaredAt(parent);
    if (type === undefined) continue;
    if (type !== "object") return { kind: "never", why: `'${parent}' is declared as ${type}, so no event holds '${path}'` };
    // Declaring `o.x.y` makes `o.x` an object wherever events hold it, whatever a read of it expects.
    if (holdsDeclared(path)) return { kind: "declared", type: "object" };
    if (!schema.additionalFields && holdsDeclared(parent)) {
      return { kind: "never", why: `'${parent}' declares fields of its own and the stream has additionalFields false, so no event holds the undeclared '${path}': declare it` };
    }
    return { kind: "inside-object" };
  }
  return { kind: "undeclared" };
}

/** `stream 'clicks' declares`, or for a stage `the results of dataflow 'page-counts' carry`. */
function holder(spec: DataflowSpec): string {
  return spec.from === undefined ? `${inputOf(spec)} declares` : `the results of ${inputOf(spec)} carry`;
}

/** Problems of a dataflow reading a stream of this schema, with the spec path of each. */
export function specProblems(schema: StreamSchema, spec: DataflowSpec): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const optional = (path: string): boolean => schema.fields[path]?.required === false;
  // A path no event can hold, or an undeclared one, as a problem (null if events may hold it).
  const unreadable = (path: string, at: Reach): string | null =>
    at.kind === "never" ? at.why : at.kind === "undeclared" ? `${holder(spec)} no field '${path}'` : null;
  const accepts: Record<string, readonly FieldType[]> = {
    key: ["string", "number", "integer"],
    time: ["time", "number", "integer"],
    number: ["number", "integer"],
    string: ["string", "number", "integer"],
  };
  for (const use of fieldUses(spec)) {
    const source = spec.project ? (spec.project[use.field] ?? use.field) : use.field;
    const at = reach(schema, source);
    const unread = unreadable(source, at);
    // With a projection, an unreadable path is reported once, at its `project` entry below.
    if (unread !== null) {
      if (!spec.project) problems.push({ path: use.path, message: unread });
    } else if (at.kind === "declared" && !accepts[use.need]?.includes(at.type)) {
      problems.push({ path: use.path, message: `'${source}' is declared as ${at.type}; this use needs ${accepts[use.need]?.join(" or ")}` });
    } else if (optional(source)) {
      // Every event the dataflow counts needs it; a conforming event without it would refuse the batch.
      problems.push({ path: use.path, message: `'${source}' is optional in ${inputOf(spec)}, but this use needs it in every event: declare it required` });
    }
  }
  if (spec.filter) {
    for (const field of filterFields(spec.filter)) {
      const unread = unreadable(field, reach(schema, field));
      if (unread !== null) problems.push({ path: ["filter"], message: unread });
    }
  }
  if (spec.project) {
    for (const [name, path] of Object.entries(spec.project)) {
      const unread = unreadable(path, reach(schema, path));
      if (unread !== null) problems.push({ path: ["project", name], message: unread });
    }
  }
  return problems;
}
