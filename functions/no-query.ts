/**
 * Routes that document no query parameters refuse any (`400`, naming it), as results,
 * subscribe and status refuse the ones they do not know: a misspelt or unsupported
 * parameter (`?limit=`, `?force=`) is never silently ignored.
 */
import { zValidator } from "@hono/zod-validator";
import { z } from "zod";
import { onInvalid } from "./http-errors.ts";

/**
 * The paths (Hono patterns) whose routes take no query string; `/v1/openapi.json` stays
 * lenient. Not the events route yet: its refusals are counted by its own middleware
 * (functions/routes/events.ts), which runs after these, so the check belongs there.
 */
export const PATHS_WITHOUT_QUERY = [
  "/v1/dataflows",
  "/v1/dataflows/:id",
  "/v1/streams",
  "/v1/streams/:stream",
  "/v1/operators",
  "/v1/admin/*",
] as const;

/** Refuses every query parameter. */
export const noQueryParameters = zValidator("query", z.strictObject({}), onInvalid);
