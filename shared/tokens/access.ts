/**
 * Who may call what under `/v1` (issue 13), decided in one place from the method and
 * path, so a route cannot forget its check: the long-lived tokens, and signed tokens
 * limited to ingest into named streams, reading named dataflows, or admin.
 */
import type { TokenClaims } from "../wire/tokens.ts";

/** An authenticated caller: FLUX_API_TOKEN, FLUX_ADMIN_TOKEN, or a verified signed token. */
export type Principal = { kind: "api" } | { kind: "admin" } | { kind: "scoped"; claims: TokenClaims };

/**
 * What a request needs: posting into a stream, reading a dataflow, the status (filtered to
 * what the caller may read), the general API, the admin routes, or managing tokens (minting
 * and revoking: everything under `/v1/admin/tokens`).
 */
type Access =
  | { kind: "ingest"; stream: string }
  | { kind: "read"; dataflow: string }
  | { kind: "status" }
  | { kind: "api" }
  | { kind: "admin" }
  | { kind: "tokens" };

/**
 * The access a request needs. `pathname` is the raw URL path; segments are percent-decoded
 * the way the router decodes its parameters. Anything not listed needs the general API.
 */
export function requiredAccess(method: string, pathname: string): Access {
  // A path without '%' decodes to itself: the usual request skips decoding (about 1% of the profiled samples at P=4, R=2).
  const raw = pathname.split("/").slice(1);
  const segments = pathname.includes("%") ? raw.map(decodeSegment) : raw;
  const [v1, resource, name, sub, ...rest] = segments;
  const reading = method === "GET" || method === "HEAD";
  if (v1 !== "v1" || segments.includes(null)) return { kind: "api" };
  if (resource === "admin") return name === "tokens" ? { kind: "tokens" } : { kind: "admin" };
  if (rest.length > 0 || !name) return resource === "status" && reading && name === undefined ? { kind: "status" } : { kind: "api" };
  if (resource === "streams" && sub === "events" && method === "POST") return { kind: "ingest", stream: name };
  if (resource === "dataflows" && reading && (sub === undefined || sub === "results" || sub === "subscribe")) return { kind: "read", dataflow: name };
  return { kind: "api" };
}

/**
 * Whether `principal` may make a request needing `access`. The admin token may do
 * everything; a signed admin token everything except managing tokens (so a leaked short-lived
 * token cannot extend itself, nor revoke the tokens of others); the API token everything
 * outside `/v1/admin`.
 */
export function isAllowed(principal: Principal, access: Access): boolean {
  if (principal.kind === "admin") return true;
  if (principal.kind === "api") return access.kind !== "admin" && access.kind !== "tokens";
  const { claims } = principal;
  switch (claims.scope) {
    case "admin":
      return access.kind !== "tokens";
    case "ingest":
      return access.kind === "ingest" && claims.streams.includes(access.stream);
    case "read":
      return access.kind === "status" || (access.kind === "read" && claims.dataflows.includes(access.dataflow));
  }
}

/** Whether `principal` may see dataflow `id` (in `/v1/status`). */
export function canReadDataflow(principal: Principal, id: string): boolean {
  return isAllowed(principal, { kind: "read", dataflow: id });
}

function decodeSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}
