/**
 * Maps every failure onto the one error envelope (STYLE.md §6): the shared validation
 * hook for `zValidator`, and the app-wide error and not-found handlers.
 */
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { z } from "zod";
import { FluxError, type ErrorCode } from "../shared/errors.ts";
import { describeIssues } from "../shared/http/describe-issues.ts";

/** Builds an error response with the envelope, adding `Retry-After` to retryable 503s. */
export function errorResponse(c: Context, err: FluxError): Response {
  if (err.code === "UNAVAILABLE" || err.code === "BACKPRESSURE") c.header("Retry-After", "1");
  if (err.code === "UNAUTHORIZED") c.header("WWW-Authenticate", 'Bearer realm="flux"');
  return c.json(err.toEnvelope(), err.status);
}

const TARGETS: Record<string, string> = { json: "request body", query: "query string", param: "path", header: "headers" };

/**
 * The `zValidator` hook: a failed parse becomes `400 INVALID_REQUEST`, its message naming
 * each bad field and what was expected (the first three), `details` zod's error tree.
 */
export function onInvalid(
  result: ({ success: true } | { success: false; error: z.core.$ZodError }) & { target: string; data?: unknown },
  c: Context,
): Response | undefined {
  return result.success ? undefined : invalidAnswer(c, result.target, result.error, result.data);
}

/** The `400 INVALID_REQUEST` for `data` of `target` ("json", "query", "param", "header") that failed to parse with `error`. */
export function invalidAnswer(c: Context, target: string, error: z.core.$ZodError, data: unknown): Response {
  // Only a JSON body has a root worth naming; a query string's unknown parameter is just that.
  const sentences = describeIssues(error.issues, data, [], target === "json" ? "(body)" : "");
  const more = sentences.length > 3 ? ` (and ${sentences.length - 3} more in details)` : "";
  const message = `invalid ${TARGETS[target] ?? target}: ${sentences.slice(0, 3).join("; ")}${more}`;
  return errorResponse(c, new FluxError("INVALID_REQUEST", message, z.treeifyError(error)));
}

/** `app.onError`: Flux errors through the table, Hono's own 4xx kept as 4xx, the rest a logged 500. */
export function onError(err: Error, c: Context): Response {
  if (err instanceof FluxError) return errorResponse(c, err);
  if (err instanceof HTTPException && err.status < 500) {
    const code: ErrorCode = /JSON/i.test(err.message) ? "INVALID_JSON" : err.status === 401 ? "UNAUTHORIZED" : "INVALID_REQUEST";
    return errorResponse(c, new FluxError(code, err.message || "bad request"));
  }
  console.error("unhandled error", { method: c.req.method, path: c.req.path, error: err.stack ?? String(err) });
  return errorResponse(c, new FluxError("INTERNAL", "internal error: a bug in Flux, not in the request; the Worker log has the details (please report it)"));
}

/** A fault path whose replica name kept its slashes: the name, and how it must be sent. */
const RAW_REPLICA_NAME = /^\/v1\/admin\/replicas\/(.+\/.+)\/fault$/;

/** `app.notFound`: unknown paths get the envelope too. */
export function onNotFound(c: Context): Response {
  const raw = RAW_REPLICA_NAME.exec(c.req.path)?.[1];
  const hint = raw ? `: URL-encode the replica name's slashes (${raw.replaceAll("/", "%2F")})` : "";
  return errorResponse(c, new FluxError("NOT_FOUND", `no route for ${c.req.method} ${c.req.path}${hint}`));
}
