/**
 * Access control on `/v1` (issues 2 and 13). The caller is the long-lived API or admin
 * token (compared in constant time) or a verified signed token; what it may do is decided
 * by `shared/tokens/access.ts`. Browsers may send a signed read token to the subscribe route
 * in `?access_token=` or a `flux-token.<token>` WebSocket subprotocol; a long-lived token is
 * never accepted there. A signed token's id is checked against the isolate's copy of the
 * revocation list (issue 26), so a revocation costs no object call per request. No token is
 * ever logged or echoed (its id is not secret: it grants nothing).
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
  const adminPath = access.kind === "admin" || access.kind === "tokens";
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
  if (isSignedToken(credential.token)) return verifySigned(c, credential.token).then(admit);
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

/** The principal a signed token carries, once its signature, expiry and revocation are checked; `details.reason` says which failed. */
async function verifySigned(c: Context<AppEnv>, token: string): Promise<Principal> {
  const secrets = parseTokenSecrets(c.env.FLUX_TOKEN_SECRETS);
  if (!secrets.ok) throw new FluxError("NOT_CONFIGURED", `signed tokens are not enabled on this deployment: ${secrets.problem}`);
  const verdict = await verifyToken(token, secrets.secrets, Date.now(), hmacSha256);
  if (!verdict.ok) {
    const why = { malformed: "is malformed", signature: "has a signature no configured secret made (tampered, or its secret was retired)", expired: "has expired" };
    throw new FluxError("UNAUTHORIZED", `the signed token ${why[verdict.reason]}`, { reason: verdict.reason });
  }
  const { id } = verdict.claims;
  if (id !== undefined && (await c.var.revocations.isRevoked(id, Date.now()))) throw tokenRevoked(id);
  return { kind: "scoped", claims: verdict.claims };
}

/** The 401 for a revoked token; `details.reason` is `revoked`. */
export function tokenRevoked(id: string): FluxError {
  return new FluxError("UNAUTHORIZED", `the signed token ${id} was revoked (POST /v1/admin/tokens/${id}/revoke); mint a new one`, { reason: "revoked", id });
}

/**
 * For a connection that outlives its request (a subscription): whether the caller's signed
 * token has been revoked since, from the isolate's list (fresh within FLUX_REVOCATION_CACHE_MS).
 * Never true for a long-lived token or a token without an id.
 * @returns the check, and the token's id for the message when it says yes.
 */
export function revocationCheck(c: Context<AppEnv>): { id: string; isRevoked: () => Promise<boolean> } | null {
  const { principal, revocations } = c.var;
  const id = principal.kind === "scoped" ? principal.claims.id : undefined;
  if (id === undefined) return null;
  // A list that cannot be refreshed keeps the one held (RevocationCache), so this rarely fails; then the stream goes on.
  return { id, isRevoked: () => revocations.isRevoked(id, Date.now()).catch(() => false) };
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
