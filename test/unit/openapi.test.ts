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
      "/v1/admin/counters",
      "/v1/admin/replicas/{name}/fault",
      "/v1/admin/tokens",
      "/v1/admin/tokens/{id}/revoke",
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
    expect(Object.keys(spec?.properties ?? {})).toEqual(expect.arrayContaining(["stream", "from", "key", "project", "window", "aggregates", "operator", "idleAdvanceMs", "partitions", "replication"]));
    // Either window and aggregates or an operator, and a stream or `from`: the schema's refinement checks which.
    expect(spec?.required).toEqual(["key"]);
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
    const revoke = doc.paths["/v1/admin/tokens/{id}/revoke"]?.post;
    expect(revoke?.requestBody).toBeUndefined();
    expect(revoke?.parameters?.map((p) => [p.name, p.in])).toEqual([["id", "path"]]);
    expect(Object.keys(revoke?.responses ?? {})).toEqual(expect.arrayContaining(["200", "400", "401", "403"]));
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

describe("buildOpenApi describes exactly what the server does (issue 11, defect 7)", () => {
  const doc = buildOpenApi() as unknown as Doc & { paths: Record<string, Record<string, { parameters?: { name: string; schema: { pattern?: string; maxLength?: number } }[] }>> };
  const operation = (path: string, method: string) => doc.paths[path]?.[method] as { responses: Record<string, unknown>; parameters?: { name: string; in: string; schema: { pattern?: string; maxLength?: number } }[] } | undefined;

  it("gives component schemas readable names", () => {
    const names = Object.keys(doc.components.schemas);
    expect(names).toContain("FilterExpression");
    expect(names.filter((n) => /__schema|^(input|output)-\d/.test(n))).toEqual([]);
  });

  it("lists 413 and 415 on every route that reads a JSON body", () => {
    for (const [path, method] of [["/v1/dataflows/{id}", "put"], ["/v1/streams/{stream}", "put"], ["/v1/admin/replicas/{name}/fault", "post"], ["/v1/admin/tokens", "post"], ["/v1/streams/{stream}/events", "post"]] as const) {
      expect(Object.keys(operation(path, method)?.responses ?? {}), `${method} ${path}`).toEqual(expect.arrayContaining(["400", "401", "403", "413", "415", "500", "503"]));
    }
  });

  it("bounds the number of aggregates and of stream fields as the server does", () => {
    const body = (path: string) => (operation(path, "put") as { requestBody?: { content: Record<string, { schema: { properties: Record<string, { minProperties?: number; maxProperties?: number }> } }> } } | undefined)?.requestBody?.content["application/json"]?.schema.properties;
    expect(body("/v1/dataflows/{id}")?.aggregates).toMatchObject({ minProperties: 1, maxProperties: 32 });
    expect(body("/v1/streams/{stream}")?.fields).toMatchObject({ minProperties: 1, maxProperties: 200 });
  });

  it("says the largest Flux-Seq, which its pattern alone cannot", () => {
    const seq = (operation("/v1/streams/{stream}/events", "post")?.parameters ?? []).find((p) => p.name === "flux-seq") as { schema: { description?: string } } | undefined;
    expect(seq?.schema.description).toContain("9007199254740991");
  });

  it("bounds path parameters with the server's own patterns and lengths", () => {
    const id = (doc.paths["/v1/dataflows/{id}"]?.parameters as { schema: { pattern: string; maxLength: number } }[] | undefined)?.[0]?.schema;
    expect(id?.maxLength).toBe(64);
    const pattern = new RegExp(id?.pattern ?? "^$");
    for (const good of ["clicks", "a.b-c_1", "_x"]) expect(pattern.test(good), good).toBe(true);
    for (const bad of ["__proto__", "__x", "a b", "-a", ".a", "a/b", ""]) expect(pattern.test(bad), bad).toBe(false);
    const replica = operation("/v1/admin/replicas/{name}/fault", "post")?.parameters?.[0]?.schema;
    expect(new RegExp(replica?.pattern ?? "^$").test("clicks/p0/g1")).toBe(true);
    expect(new RegExp(replica?.pattern ?? "^$").test("__proto__/p0/g1")).toBe(false);
  });
});
