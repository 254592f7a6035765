/**
 * Dataflow filters (issue 6): comparisons on event fields combined with and/or/not,
 * evaluated by the router before routing, so replicas only ever see events that pass.
 */
import * as z from "zod";
import { FieldPathSchema, fieldReader } from "../field-path.ts";

const ScalarSchema = z.union([z.string().max(1_000), z.number(), z.boolean(), z.null()]);
type Scalar = z.infer<typeof ScalarSchema>;

/** A filter expression. Recursive, so its type is written out once here for the schema below. */
export type FilterExpr =
  | { field: string; op: "eq" | "ne" | "lt" | "le" | "gt" | "ge"; value: Scalar }
  | { field: string; op: "in"; values: Scalar[] }
  | { and: FilterExpr[] }
  | { or: FilterExpr[] }
  | { not: FilterExpr };

/** The most nodes one filter may have. */
const MAX_NODES = 100;

/** A filter whose leaves name fields with `field`, with at most {@link MAX_NODES} nodes; `id` names it in the OpenAPI document. */
function filterSchema(field: z.ZodType<string>, id: string) {
  const expr: z.ZodType<FilterExpr> = z
    .lazy(() =>
      z.union([
        z.strictObject({ field, op: z.enum(["eq", "ne", "lt", "le", "gt", "ge"]), value: ScalarSchema }),
        z.strictObject({ field, op: z.literal("in"), values: z.array(ScalarSchema).min(1).max(1_000) }),
        z.strictObject({ and: z.array(expr).min(1).max(MAX_NODES) }),
        z.strictObject({ or: z.array(expr).min(1).max(MAX_NODES) }),
        z.strictObject({ not: expr }),
      ]),
    )
    .meta({ id });
  return expr.refine((e) => countNodes(e) <= MAX_NODES, `a filter has at most ${MAX_NODES} nodes`);
}

/** A filter of a new spec: fields by path (`shared/field-path.ts`), like every other part of a spec. */
export const FilterSchema = filterSchema(FieldPathSchema, "FilterExpression");

/** A filter as stored: any field name accepted before paths were checked (issue 11) still loads. */
export const StoredFilterSchema = filterSchema(z.string().min(1).max(256), "StoredFilterExpression");

function countNodes(expr: FilterExpr): number {
  if ("and" in expr) return 1 + expr.and.reduce((n, e) => n + countNodes(e), 0);
  if ("or" in expr) return 1 + expr.or.reduce((n, e) => n + countNodes(e), 0);
  if ("not" in expr) return 1 + countNodes(expr.not);
  return 1;
}

/** The fields a filter reads. */
export function filterFields(expr: FilterExpr): string[] {
  if ("and" in expr) return expr.and.flatMap(filterFields);
  if ("or" in expr) return expr.or.flatMap(filterFields);
  if ("not" in expr) return filterFields(expr.not);
  return [expr.field];
}

/**
 * A filter as a predicate over posted events, field paths split once. A missing field
 * reads as null. Ordering comparisons hold only between two numbers or two strings;
 * any other pair compares false.
 */
export function compileFilter(expr: FilterExpr): (event: unknown) => boolean {
  if ("and" in expr) {
    const all = expr.and.map(compileFilter);
    return (event) => all.every((p) => p(event));
  }
  if ("or" in expr) {
    const any = expr.or.map(compileFilter);
    return (event) => any.some((p) => p(event));
  }
  if ("not" in expr) {
    const inner = compileFilter(expr.not);
    return (event) => !inner(event);
  }
  const read = fieldReader(expr.field);
  const valueOf = (event: unknown): unknown => read(event) ?? null;
  if (expr.op === "in") {
    const values = expr.values;
    return (event) => {
      const actual = valueOf(event);
      return values.some((v) => v === actual);
    };
  }
  const expected = expr.value;
  if (expr.op === "eq") return (event) => valueOf(event) === expected;
  if (expr.op === "ne") return (event) => valueOf(event) !== expected;
  const op = expr.op;
  return (event) => {
    const a = valueOf(event);
    const comparable = (typeof a === "number" && typeof expected === "number") || (typeof a === "string" && typeof expected === "string");
    if (!comparable) return false;
    const x = a as number | string;
    const y = expected as number | string;
    return op === "lt" ? x < y : op === "le" ? x <= y : op === "gt" ? x > y : x >= y;
  };
}
