/**
 * Access control on `/v1` (issues 2 and 13). The caller is the long-lived API or admin
 * token (compared in constant time) or a verified signed token; what it may do is decided
 * by `shared/tokens/access.ts`. Browsers may send a signed read token to the subscribe route
 * in `?access_token=` or a `flux-token.<token>` WebSocket subprotocol; a long-lived token is
 * never accepted there. No token is ever logged or echoed.
 */
import type { Context } from "hono";
import { FluxError } from "../shared/errors.ts";
import { isAllowed, requiredAccess, type Principal } from "../shared/tokens/access.ts";
import { isSignedToken, verifyToken } from "../shared/tokens/signed-token.ts";
import { parseTokenSecrets } from "../shared/tokens/token-secrets.ts";
import type { AppEnv } from "./app-env.ts";
import { hmacSha256, matchToken } from "./token-crypto.ts";

/** The WebSocket subprotocol the server selects; a token rides beside it as `flux-token.<token>`. */
export const SUBPROTOCOL = "flux.v1";
const TOKEN_SUBPROTOCOL = "flux-token.";

/**
 * Authenticates the caller, checks its access to this request, and sets `c.var.principal`;
 * throws the 401 or 403 otherwise. Returns a promise only for a signed token (its HMAC).
 */
export function authenticate(c: Context<AppEnv>): Promise<void> | void {
  const access = requiredAccess(c.req.method, c.req.path);
  const adminPath = access.kind === "admin" || access.kind === "mint";
  const secretName = adminPath ? "FLUX_ADMIN_TOKEN" : "FLUX_API_TOKEN";
  if (!(adminPath ? c.env.FLUX_ADMIN_TOKEN : c.env.FLUX_API_TOKEN)) {
    throw new FluxError("NOT_CONFIGURED", `${secretName} is not set; this deployment refuses requests until it is (wrangler secret put ${secretName})`);
  }
  const credential = presentedCredential(c);
  if (!credential) throw new FluxError("UNAUTHORIZED", "missing bearer token: send Authorization: Bearer <token>");
  const admit = (principal: Principal) => {
    if (credential.inUrl && !(principal.kind === "scoped" && principal.claims.scope === "read")) {
      throw new FluxError("FORBIDDEN", "only a signed read token may be sent in the URL or a WebSocket subprotocol; send others as Authorization: Bearer");
    }
    if (!isAllowed(principal, access)) throw new FluxError("FORBIDDEN", `this token does not allow ${c.req.method} ${c.req.path}${describeScope(principal)}`);
    c.set("principal", principal);
  };
  if (isSignedToken(credential.token)) return verifySigned(c.env, credential.token).then(admit);
  admit(longLived(c.env, credential.token, credential.inUrl));
}

/** The token from `Authorization`, or on the subscribe route from a subprotocol or `?access_token=`. */
function presentedCredential(c: Context<AppEnv>): { token: string; inUrl: boolean } | null {
  const subscribe = /^\/v1\/dataflows\/[^/]+\/subscribe$/.test(c.req.path);
  const query = c.req.query("access_token");
  if (query !== undefined && !subscribe) throw new FluxError("INVALID_REQUEST", "access_token is accepted only by GET /v1/dataflows/{id}/subscribe");
  const header = c.req.header("authorization");
  if (header) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1]) throw new FluxError("UNAUTHORIZED", "the Authorization header must be 'Bearer <token>': one token after the word Bearer");
    return { token: match[1], inUrl: false };
  }
  const offered = (c.req.header("sec-websocket-protocol") ?? "").split(",").map((p) => p.trim());
  const fromProtocol = offered.find((p) => p.startsWith(TOKEN_SUBPROTOCOL))?.slice(TOKEN_SUBPROTOCOL.length);
  if (fromProtocol !== undefined && subscribe) {
    if (!offered.includes(SUBPROTOCOL)) throw new FluxError("INVALID_REQUEST", `offer the ${SUBPROTOCOL} subprotocol beside ${TOKEN_SUBPROTOCOL}<token>`);
    return { token: fromProtocol, inUrl: true };
  }
  return query ? { token: query, inUrl: true } : null;
}

/** The principal a signed token carries, once its signature and expiry are checked. */
async function verifySigned(env: Env, token: string): Promise<Principal> {
  const secrets = parseTokenSecrets(env.FLUX_TOKEN_SECRETS);
  if (!secrets.ok) throw new FluxError("NOT_CONFIGURED", `signed tokens are not enabled on this deployment: ${secrets.problem}`);
  const verdict = await verifyToken(token, secrets.secrets, Date.now(), hmacSha256);
  if (verdict.ok) return { kind: "scoped", claims: verdict.claims };
  const why = { malformed: "is malformed", signature: "has a signature no configured secret made (tampered, or its secret was retired)", expired: "has expired" };
  throw new FluxError("UNAUTHORIZED", `the signed token ${why[verdict.reason]}`);
}

/** Which long-lived token `token` is; one in a URL is refused without being compared. */
function longLived(env: Env, token: string, inUrl: boolean): Principal {
  if (inUrl) throw new FluxError("UNAUTHORIZED", "a long-lived token is never accepted in a URL or a subprotocol; mint a read token (POST /v1/admin/tokens)");
  const match = matchToken(token, [env.FLUX_ADMIN_TOKEN ?? "", env.FLUX_API_TOKEN ?? ""]);
  if (match === 0) return { kind: "admin" };
  if (match === 1) return { kind: "api" };
  throw new FluxError("UNAUTHORIZED", "wrong bearer token");
}

function describeScope(principal: Principal): string {
  if (principal.kind !== "scoped") return principal.kind === "api" ? " (the API token cannot use /v1/admin; use FLUX_ADMIN_TOKEN)" : "";
  const { claims } = principal;
  if (claims.scope === "ingest") return ` (an ingest token for streams ${claims.streams.join(", ")})`;
  if (claims.scope === "read") return ` (a read token for dataflows ${claims.dataflows.join(", ")})`;
  return " (a signed admin token cannot mint tokens; use FLUX_ADMIN_TOKEN)";
}
