/**
 * Routes that document no query parameters refuse any (`400`, naming it), as results,
 * subscribe and status refuse the ones they do not know: a misspelt or unsupported
 * parameter (`?limit=`, `?force=`) is never silently ignored.
 */
import type { Context, MiddlewareHandler } from "hono";
import { zValidator } from "@hono/zod-validator";
import { z } from "zod";
import { FluxError } from "../shared/errors.ts";
import { onInvalid } from "./http-errors.ts";

/**
 * The routes (methods and Hono patterns) that take no query string; only existing routes,
 * so another method still gets its 404. `/v1/openapi.json` stays lenient. The events route
 * applies {@link noQueryParameters} itself, after the middleware that counts its refusals.
 */
export const ROUTES_WITHOUT_QUERY: readonly [methods: string[], path: string][] = [
  [["GET"], "/v1/dataflows"],
  [["GET", "PUT", "DELETE"], "/v1/dataflows/:id"],
  [["GET"], "/v1/streams"],
  [["GET", "PUT"], "/v1/streams/:stream"],
  [["GET"], "/v1/operators"],
  [["POST"], "/v1/admin/tokens"],
  [["POST"], "/v1/admin/tokens/:id/revoke"],
  [["POST"], "/v1/admin/replicas/:name/fault"],
  [["GET"], "/v1/admin/counters"],
];

const refuseQuery = zValidator("query", z.strictObject({}), onInvalid);

/** Refuses every query parameter (a URL without `?` has none: the validator's work is skipped on the hot ingest path). */
export const noQueryParameters: MiddlewareHandler = (c, next) => (c.req.url.includes("?") ? refuseQuery(c, next) : next());

/**
 * Refuses a query parameter without a name (`?=x`) on every route that reads its query,
 * which the query parser would drop before any schema saw it (throws `400 INVALID_REQUEST`).
 */
export function refuseNamelessParameter(c: Context): void {
  if (c.req.url.includes("?") && new URL(c.req.url).searchParams.has("")) {
    throw new FluxError("INVALID_REQUEST", "invalid query string: a parameter without a name (like '?=x'); name every parameter, or leave it out");
  }
}
