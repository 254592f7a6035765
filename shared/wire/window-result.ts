/** The shape of one window's results, as stored by replicas and returned by the results API. */
import * as z from "zod";

/** One entry of a `topk` aggregate: `count` is an upper bound of the value's weight, `count - error` a lower bound. */
const TopEntrySchema = z.object({ value: z.string(), count: z.number(), error: z.number() });

/** What one aggregate (or a custom operator's output field) holds. */
export const AggregateValueSchema = z.union([z.number(), z.string(), z.null(), z.array(TopEntrySchema)]);
export type AggregateValue = z.infer<typeof AggregateValueSchema>;

/** One key's results over one window; `closed` is true once no record can change it. */
export const WindowResultSchema = z.object({
  key: z.string(),
  windowStartMs: z.number(),
  windowEndMs: z.number(),
  values: z.record(z.string(), AggregateValueSchema),
  closed: z.boolean(),
});
export type WindowResult = z.infer<typeof WindowResultSchema>;

/**
 * What routers send replicas: `[key, timeMs, ...field values]`, the values in the order
 * of the dataflow's record fields (see `shared/operators/compile.ts`).
 */
export type FluxRecord = [key: string, timeMs: number, ...values: (number | string)[]];

/** Whether `value` has a {@link FluxRecord}'s shape (a cheap loop: log entries are parsed on the hot path). */
export function isFluxRecord(value: unknown): value is FluxRecord {
  if (!Array.isArray(value) || value.length < 2 || typeof value[0] !== "string" || typeof value[1] !== "number") return false;
  for (let i = 2; i < value.length; i++) if (typeof value[i] !== "number" && typeof value[i] !== "string") return false;
  return true;
}

/** A position in the (window start, key) order results are returned in. */
export interface ResultPosition {
  windowStartMs: number;
  key: string;
}

/** Orders results by window start, then key (by UTF-16 code units, as `<` does). */
export function compareResults(a: ResultPosition, b: ResultPosition): number {
  return a.windowStartMs - b.windowStartMs || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

/** Whether `item` comes strictly after `position`. */
export function isAfter(item: ResultPosition, position: ResultPosition): boolean {
  return compareResults(item, position) > 0;
}
