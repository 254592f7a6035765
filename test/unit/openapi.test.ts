/** The OpenAPI 3.1 document is generated from the zod schemas the routes use. */
import { describe, expect, it } from "vitest";
import { buildOpenApi } from "../../shared/openapi.ts";

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, { parameters?: { name: string; in: string; required: boolean }[]; requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown>; required?: string[] } }> }; responses: Record<string, unknown> }>>;
  components: { schemas: { Error: { properties: { error: { properties: { code: { enum: string[] } } } } } } };
};

describe("buildOpenApi", () => {
  const doc = buildOpenApi() as unknown as Doc;

  it("is OpenAPI 3.1 and describes every route", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths).sort()).toEqual([
      "/v1/admin/replicas/{name}/fault",
      "/v1/admin/tokens",
      "/v1/dataflows",
      "/v1/dataflows/{id}",
      "/v1/dataflows/{id}/results",
      "/v1/dataflows/{id}/subscribe",
      "/v1/openapi.json",
      "/v1/operators",
      "/v1/status",
      "/v1/streams",
      "/v1/streams/{stream}",
      "/v1/streams/{stream}/events",
    ]);
    expect(Object.keys(doc.paths["/v1/dataflows/{id}"] ?? {}).sort()).toEqual(["delete", "get", "parameters", "put"]);
  });

  it("takes request bodies and parameters from the validation schemas", () => {
    const put = doc.paths["/v1/dataflows/{id}"]?.put;
    const spec = put?.requestBody?.content["application/json"]?.schema;
    expect(Object.keys(spec?.properties ?? {})).toEqual(expect.arrayContaining(["stream", "key", "project", "window", "aggregates", "operator", "idleAdvanceMs", "partitions", "replication"]));
    // Either window and aggregates or an operator: the schema's refinement checks which.
    expect(spec?.required).toEqual(["stream", "key"]);
    const post = doc.paths["/v1/streams/{stream}/events"]?.post;
    expect(post?.parameters?.filter((p) => p.in === "header").map((p) => [p.name, p.required])).toEqual([
      ["flux-producer-id", true],
      ["flux-seq", true],
    ]);
    const results = doc.paths["/v1/dataflows/{id}/results"]?.get;
    expect(results?.parameters?.filter((p) => p.in === "query").map((p) => p.name)).toEqual(["key", "from", "to", "limit", "after"]);
    const subscribe = doc.paths["/v1/dataflows/{id}/subscribe"]?.get;
    expect(subscribe?.parameters?.filter((p) => p.in === "query").map((p) => p.name)).toEqual(["cursor", "maxMs", "access_token"]);
    const mint = doc.paths["/v1/admin/tokens"]?.post?.requestBody?.content["application/json"]?.schema as { oneOf?: unknown[]; anyOf?: unknown[] };
    expect((mint.oneOf ?? mint.anyOf ?? []).length).toBe(3);
  });

  it("resolves every $ref inside the document (recursive filter schemas included)", () => {
    const text = JSON.stringify(doc);
    const refs = [...text.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1] ?? "");
    expect(refs.length).toBeGreaterThan(0);
    expect(refs.filter((name) => !(name in doc.components.schemas))).toEqual([]);
    expect(text).not.toContain('"#/$defs/');
  });

  it("lists every error code in the shared error envelope", () => {
    expect(doc.components.schemas.Error.properties.error.properties.code.enum).toEqual(expect.arrayContaining(["INVALID_REQUEST", "UNAVAILABLE", "SEQ_TOO_OLD", "FORBIDDEN"]));
  });
});
