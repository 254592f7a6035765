/** Access control on /v1 in workerd: bearer token, constant-time check, refusal when unconfigured (issue 2). */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../functions/app.ts";
import { call } from "../helpers/api.ts";

describe("access control", () => {
  it.each([
    ["no Authorization header", { authorization: null }],
    ["an empty Authorization header", { authorization: "" }],
    ["a wrong token", { authorization: "Bearer not-the-token" }],
    ["a token that is a prefix of the real one", { authorization: "Bearer test" }],
    ["another scheme", { authorization: "Basic dGVzdC10b2tlbg==" }],
  ])("answers 401 in the envelope for %s", async (_name, headers) => {
    for (const [method, path] of [["GET", "/v1/status"], ["GET", "/v1/dataflows"], ["POST", "/v1/streams/s/events"], ["PUT", "/v1/dataflows/x"]] as const) {
      const res = await call(method, path, method === "GET" ? undefined : [], headers);
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain("Bearer");
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("UNAUTHORIZED");
    }
  });

  it("tells a malformed Authorization header from a missing one", async () => {
    for (const authorization of ["test-token", "Basic dGVzdC10b2tlbg==", "Bearer", "Bearer test-token extra"]) {
      const body = (await (await call("GET", "/v1/status", undefined, { authorization })).json()) as { error: { message: string } };
      expect(body.error.message, authorization).toBe("the Authorization header must be 'Bearer <token>': one token after the word Bearer");
    }
    const missing = (await (await call("GET", "/v1/status", undefined, { authorization: null })).json()) as { error: { message: string } };
    expect(missing.error.message).toBe("missing bearer token: send Authorization: Bearer <token>");
  });

  it("serves the OpenAPI document without a token", async () => {
    const res = await call("GET", "/v1/openapi.json", undefined, { authorization: null });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { openapi: string }).openapi).toBe("3.1.0");
  });

  it("accepts the configured token", async () => {
    expect((await call("GET", "/v1/status")).status).toBe(200);
  });

  it("answers 500 saying the configuration is invalid, not that the request hit a bug, for a bad [vars] value", async () => {
    const res = await createApp().request("/v1/status", {}, { ...env, FLUX_MAX_BODY_BYTES: "lots" });
    expect(res.status).toBe(500);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("INTERNAL");
    expect(body.error.message).toMatch(/configuration .* is invalid/);
    expect(body.error.message).not.toContain("lots");
  });

  it("refuses everything when no token is configured instead of running open", async () => {
    const res = await createApp().request("/v1/status", { headers: { authorization: "Bearer " } }, { ...env, FLUX_API_TOKEN: "" });
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("NOT_CONFIGURED");
    expect(body.error.message).toContain("FLUX_API_TOKEN");
  });
});
