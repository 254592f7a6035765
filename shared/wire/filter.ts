/**
 * Dataflow filters (issue 6): comparisons on event fields combined with and/or/not,
 * evaluated by the router before routing, so replicas only ever see events that pass.
 */
import { z } from "zod";

const ScalarSchema = z.union([z.string().max(1_000), z.number(), z.boolean(), z.null()]);
type Scalar = z.infer<typeof ScalarSchema>;

/** A filter expression. Recursive, so its type is written out once here for the schema below. */
export type FilterExpr =
  | { field: string; op: "eq" | "ne" | "lt" | "le" | "gt" | "ge"; value: Scalar }
  | { field: string; op: "in"; values: Scalar[] }
  | { and: FilterExpr[] }
  | { or: FilterExpr[] }
  | { not: FilterExpr };

const FieldSchema = z.string().min(1).max(128);

/** The most nodes one filter may have. */
const MAX_NODES = 100;

const ExprSchema: z.ZodType<FilterExpr> = z.lazy(() =>
  z.union([
    z.strictObject({ field: FieldSchema, op: z.enum(["eq", "ne", "lt", "le", "gt", "ge"]), value: ScalarSchema }),
    z.strictObject({ field: FieldSchema, op: z.literal("in"), values: z.array(ScalarSchema).min(1).max(1_000) }),
    z.strictObject({ and: z.array(ExprSchema).min(1).max(MAX_NODES) }),
    z.strictObject({ or: z.array(ExprSchema).min(1).max(MAX_NODES) }),
    z.strictObject({ not: ExprSchema }),
  ]),
);

/** A filter, with at most {@link MAX_NODES} nodes. */
export const FilterSchema = ExprSchema.refine((expr) => countNodes(expr) <= MAX_NODES, `a filter has at most ${MAX_NODES} nodes`);

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
 * Whether `event` passes. A missing field reads as null. Ordering comparisons hold only
 * between two numbers or two strings; any other pair compares false.
 */
export function passes(expr: FilterExpr, event: Readonly<Record<string, unknown>>): boolean {
  if ("and" in expr) return expr.and.every((e) => passes(e, event));
  if ("or" in expr) return expr.or.some((e) => passes(e, event));
  if ("not" in expr) return !passes(expr.not, event);
  const actual = Object.hasOwn(event, expr.field) ? event[expr.field] : null;
  if (expr.op === "in") return expr.values.some((v) => v === actual);
  if (expr.op === "eq") return actual === expr.value;
  if (expr.op === "ne") return actual !== expr.value;
  const comparable = (typeof actual === "number" && typeof expr.value === "number") || (typeof actual === "string" && typeof expr.value === "string");
  if (!comparable) return false;
  const a = actual as number | string;
  const b = expr.value as number | string;
  return expr.op === "lt" ? a < b : expr.op === "le" ? a <= b : expr.op === "gt" ? a > b : a >= b;
}
