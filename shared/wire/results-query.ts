/** The results query: key, time range and paging (`limit`, `after` cursor). */
import { z } from "zod";

const epochMs = z
  .string()
  .regex(/^-?\d{1,16}$/, "must be epoch milliseconds")
  .transform(Number);

/** A page cursor: `<window start ms>:<key>`, as returned in `next`. */
const CursorSchema = z
  .string()
  .regex(/^-?\d{1,16}:/, "a cursor from a previous page's `next`")
  .transform((cursor) => {
    const at = cursor.indexOf(":");
    return { windowStartMs: Number(cursor.slice(0, at)), key: cursor.slice(at + 1) };
  });

/** Most results one page may hold, and how many a page holds when `limit` is not given. */
const MAX_PAGE = 10_000;
export const DEFAULT_PAGE = 1_000;

/** Query string of `GET /v1/dataflows/{id}/results`; unknown parameters are refused. */
export const ResultsQuerySchema = z.strictObject({
  key: z.string().min(1).max(65_536).optional(),
  from: epochMs.optional(),
  to: epochMs.optional(),
  // One pattern for the whole range, so the OpenAPI document admits exactly what is accepted.
  limit: z
    .string()
    .regex(/^([1-9][0-9]{0,3}|10000)$/, `an integer from 1 to ${MAX_PAGE}`)
    .transform(Number)
    .optional(),
  after: CursorSchema.optional(),
}).refine((q) => q.from === undefined || q.to === undefined || q.from <= q.to, {
  message: "`from` must not be after `to` (windows overlapping [from, to) are kept)",
  path: ["from"],
});
