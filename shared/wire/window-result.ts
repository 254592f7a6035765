/** The shape of one window's aggregates, as stored by replicas and returned by the results API. */
import { z } from "zod";

/** One key's aggregates over one window; `closed` is true once no record can change it. */
export const WindowResultSchema = z.object({
  key: z.string(),
  windowStartMs: z.number(),
  windowEndMs: z.number(),
  values: z.record(z.string(), z.number().nullable()),
  closed: z.boolean(),
});
export type WindowResult = z.infer<typeof WindowResultSchema>;

/** What routers send replicas for a windowed dataflow: `[key, timeMs, ...numeric field values]`. */
const WindowRecordSchema = z.tuple([z.string(), z.number()], z.number());
export type WindowRecord = z.infer<typeof WindowRecordSchema>;

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
