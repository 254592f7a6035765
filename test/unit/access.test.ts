/** Who may call what (issue 13): the access each request needs, and each kind of caller against it. */
import { describe, expect, it } from "vitest";
import { isAllowed, requiredAccess, type Principal } from "../../shared/tokens/access.ts";

const ingest: Principal = { kind: "scoped", claims: { v: 1, scope: "ingest", streams: ["clicks"], expMs: 1 } };
const read: Principal = { kind: "scoped", claims: { v: 1, scope: "read", dataflows: ["per-page"], expMs: 1 } };
const signedAdmin: Principal = { kind: "scoped", claims: { v: 1, scope: "admin", expMs: 1 } };
const api: Principal = { kind: "api" };
const admin: Principal = { kind: "admin" };

const cases: [string, string, Principal[]][] = [
  ["POST", "/v1/streams/clicks/events", [api, admin, signedAdmin, ingest]],
  ["POST", "/v1/streams/other/events", [api, admin, signedAdmin]],
  ["POST", "/v1/streams/clicks/events/", [api, admin, signedAdmin]],
  ["PUT", "/v1/streams/clicks", [api, admin, signedAdmin]],
  ["GET", "/v1/dataflows/per-page/results", [api, admin, signedAdmin, read]],
  ["GET", "/v1/dataflows/per-page/subscribe", [api, admin, signedAdmin, read]],
  ["HEAD", "/v1/dataflows/per-page", [api, admin, signedAdmin, read]],
  ["GET", "/v1/dataflows/per%2Dpage/results", [api, admin, signedAdmin, read]],
  ["GET", "/v1/dataflows/other/results", [api, admin, signedAdmin]],
  ["DELETE", "/v1/dataflows/per-page", [api, admin, signedAdmin]],
  ["PUT", "/v1/dataflows/per-page", [api, admin, signedAdmin]],
  ["GET", "/v1/dataflows", [api, admin, signedAdmin]],
  ["GET", "/v1/status", [api, admin, signedAdmin, read]],
  ["GET", "/v1/operators", [api, admin, signedAdmin]],
  ["POST", "/v1/admin/replicas/a%2Fp0%2Fg0/fault", [admin, signedAdmin]],
  ["POST", "/v1/admin/tokens", [admin]],
  // Everything under /v1/admin/tokens manages tokens: only FLUX_ADMIN_TOKEN (issue 26).
  ["POST", "/v1/admin/tokens/", [admin]],
  ["POST", "/v1/admin/tokens/AAAAAAAAAAAAAAAA/revoke", [admin]],
  ["GET", "/v1/dataflows/%E0%A4%A/results", [api, admin, signedAdmin]],
];

describe("access", () => {
  it.each(cases)("%s %s is open to exactly the expected callers", (method, path, allowed) => {
    const everyone = [api, admin, signedAdmin, ingest, read];
    const verdicts = everyone.map((p) => isAllowed(p, requiredAccess(method, path)));
    expect(verdicts).toEqual(everyone.map((p) => allowed.includes(p)));
  });
});
