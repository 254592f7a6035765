/**
 * What docs/API.md and the OpenAPI document promise, checked from outside through the
 * Worker: the mismatches an outside review found, each pinned here.
 */
import { describe, expect, it } from "vitest";
import { call, clicksSpec, createDataflow, postEvents, subscribe, uniqueName } from "../helpers/api.ts";

async function errorOf(res: Response): Promise<{ status: number; code: string; message: string }> {
  const body = (await res.json()) as { error: { code: string; message: string } };
  return { status: res.status, code: body.error.code, message: body.error.message };
}

describe("validation messages name what is wrong", () => {
  it("an unknown query parameter is not called a body field", async () => {
    const { id } = await createDataflow();
    for (const path of [`/v1/dataflows/${id}/results?colour=red`, "/v1/status?colour=red", `/v1/dataflows/${id}/subscribe?colour=red`]) {
      const error = await errorOf(await call("GET", path));
      expect(error).toMatchObject({ status: 400, code: "INVALID_REQUEST" });
      expect(error.message).toBe("invalid query string: unknown field 'colour'");
    }
  }, 20_000);

  it("a route that documents no query parameters refuses any, and changes nothing", async () => {
    const { id, stream } = await createDataflow();
    const admin = { authorization: "Bearer test-admin-token" };
    const cases: [string, string, unknown?, Record<string, string>?][] = [
      ["GET", "/v1/dataflows?limit=1"],
      ["GET", `/v1/dataflows/${id}?x=1`],
      ["PUT", `/v1/dataflows/${uniqueName("df")}?dryRun=true`, clicksSpec(stream)],
      ["DELETE", `/v1/dataflows/${id}?force=1`],
      ["GET", "/v1/streams?x=1"],
      ["PUT", `/v1/streams/${stream}?x=1`, { fields: { page: { type: "string" } } }],
      ["GET", `/v1/streams/${stream}?x=1`],
      ["GET", "/v1/operators?x=1"],
      ["POST", "/v1/admin/tokens?x=1", { scope: "admin", ttlSeconds: 60 }, admin],
      ["POST", "/v1/admin/tokens/AAAAAAAAAAAAAAAA/revoke?x=1", undefined, admin],
      ["POST", `/v1/streams/${stream}/events?dryRun=true`, [{ page: "a", ts: 1, bytes: 1 }], { "flux-producer-id": "q", "flux-seq": "1" }],
    ];
    for (const [method, path, body, headers] of cases) {
      const error = await errorOf(await call(method, path, body, headers));
      expect(error, `${method} ${path}`).toMatchObject({ status: 400, code: "INVALID_REQUEST" });
      expect(error.message, `${method} ${path}`).toMatch(/^invalid query string: unknown field '(limit|x|dryRun|force)'$/);
    }
    // A method the path does not have is still no route, query or not.
    expect(await errorOf(await call("DELETE", `/v1/streams/${stream}?x=1`))).toMatchObject({ status: 404, code: "NOT_FOUND" });
    expect((await call("GET", `/v1/dataflows/${id}`)).status).toBe(200);
    expect((await call("GET", "/v1/dataflows")).status).toBe(200);
    expect((await call("GET", `/v1/streams/${stream}`)).status).toBe(404);
    // The refused batch was not applied: the same (producer, seq) is new, not a duplicate.
    const posted = await call("POST", `/v1/streams/${stream}/events`, [{ page: "a", ts: 1, bytes: 1 }], { "flux-producer-id": "q", "flux-seq": "1" });
    expect(await posted.json()).toMatchObject({ events: 1, duplicate: false });
  }, 20_000);

  it("a name too long or starting with '-' or '.' is refused, saying why", async () => {
    const tooLong = await errorOf(await call("PUT", `/v1/dataflows/${"a".repeat(65)}`, clicksSpec("s")));
    expect(tooLong).toMatchObject({ status: 400, code: "INVALID_REQUEST", message: "invalid path: id: must be at most 64 characters long" });
    for (const name of ["-a", ".a"]) {
      const error = await errorOf(await call("PUT", `/v1/dataflows/${name}`, clicksSpec("s")));
      expect(error).toMatchObject({ status: 400, code: "INVALID_REQUEST" });
      expect(error.message).toContain("starting with a letter, digit or '_'");
      expect((await call("GET", `/v1/dataflows/${name}`)).status).toBe(400);
    }
  });

  it("a Flux-Producer-Id over 128 characters is called too long, not missing", async () => {
    const { stream } = await createDataflow();
    const error = await errorOf(await postEvents(stream, "p".repeat(129), 1, [{ page: "a", ts: 1, bytes: 1 }]));
    expect(error).toMatchObject({ status: 400, code: "INVALID_REQUEST", message: "invalid headers: flux-producer-id: Flux-Producer-Id must be at most 128 characters" });
    expect((await postEvents(stream, "p".repeat(128), 1, [{ page: "a", ts: 1, bytes: 1 }])).status).toBe(200);
  });

  it("a key list of more than 8 fields says so", async () => {
    const error = await errorOf(await call("PUT", `/v1/dataflows/${uniqueName("df")}`, clicksSpec("s", { key: ["a", "b", "c", "d", "e", "f", "g", "h", "i"] })));
    expect(error).toMatchObject({ status: 400, code: "INVALID_REQUEST" });
    expect(error.message).toContain("key: must have at most 8 entries");
  });
});

type Param = { name: string; in: string; schema: { pattern?: string } };
type Operation = { parameters?: Param[]; requestBody?: { content: Record<string, { schema: { minItems?: number } }> }; responses: Record<string, { headers?: Record<string, unknown> }> };

async function openApi(): Promise<{ paths: Record<string, Record<string, Operation>> }> {
  return (await (await call("GET", "/v1/openapi.json")).json()) as { paths: Record<string, Record<string, Operation>> };
}

describe("the OpenAPI document admits what the server accepts", () => {
  it("results `limit`: the pattern matches exactly the values the server takes", async () => {
    const doc = await openApi();
    const limit = doc.paths["/v1/dataflows/{id}/results"]?.get?.parameters?.find((p) => p.name === "limit");
    const pattern = new RegExp(limit?.schema.pattern ?? "^$");
    const { id } = await createDataflow();
    for (const value of ["1", "999", "1000", "9999", "10000", "10001", "99999", "0", "01", "100000"]) {
      const status = (await call("GET", `/v1/dataflows/${id}/results?limit=${value}`)).status;
      expect({ value, accepted: status === 200 }).toEqual({ value, accepted: pattern.test(value) });
    }
  }, 20_000);

  it("every authenticated route lists the 400 it gives an unknown query parameter or a stray access_token", async () => {
    const doc = await openApi();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (method === "parameters" || path === "/v1/openapi.json") continue;
        expect(Object.keys(operation.responses), `${method} ${path}`).toContain("400");
      }
    }
    for (const path of ["/v1/dataflows", "/v1/streams", "/v1/operators"]) {
      expect((await errorOf(await call("GET", `${path}?access_token=abc`))).status, path).toBe(400);
    }
  });

  it("every authenticated route lists the 413 its body limit gives whatever the method, and openapi.json the 400 of an upgrade", async () => {
    const doc = await openApi();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (method === "parameters" || path === "/v1/openapi.json") continue;
        expect(Object.keys(operation.responses), `${method} ${path}`).toContain("413");
      }
    }
    // The test Worker's FLUX_MAX_BODY_BYTES is 64 KiB; a GET announcing a larger body (as `curl -X GET --data-binary` sends one).
    for (const path of ["/v1/dataflows", "/v1/status", "/v1/operators"]) {
      expect(await errorOf(await call("GET", path, undefined, { "content-length": "70000" })), path).toMatchObject({ status: 413, code: "PAYLOAD_TOO_LARGE" });
    }
    const upgrade = await call("GET", "/v1/openapi.json", undefined, { upgrade: "websocket", connection: "Upgrade" });
    expect((await errorOf(upgrade)).status).toBe(400);
    expect(Object.keys(doc.paths["/v1/openapi.json"]?.get?.responses ?? {})).toContain("400");
  });

  it("a query parameter without a name is refused wherever a query is read, and changes nothing", async () => {
    const { id, stream } = await createDataflow();
    for (const path of ["/v1/dataflows?=x", "/v1/status?=x", `/v1/dataflows/${id}/results?=x`, "/v1/streams?view=x&=y"]) {
      expect(await errorOf(await call("GET", path)), path).toMatchObject({ status: 400, code: "INVALID_REQUEST", message: expect.stringContaining("a parameter without a name") });
    }
    const refused = await call("POST", `/v1/streams/${stream}/events?=x`, [{ page: "a", ts: 1, bytes: 1 }], { "flux-producer-id": "p", "flux-seq": "1" });
    expect((await errorOf(refused)).status).toBe(400);
    // The same batch then goes in as new: the refused one left nothing behind.
    const accepted = await postEvents(stream, "p", 1, [{ page: "a", ts: 1, bytes: 1 }]);
    expect(((await accepted.json()) as { duplicate: boolean }).duplicate).toBe(false);
  });

  it("an events body is a non-empty array, and every 503 declares Retry-After", async () => {
    const doc = await openApi();
    const post = doc.paths["/v1/streams/{stream}/events"]?.post;
    expect(post?.requestBody?.content["application/json"]?.schema.minItems).toBe(1);
    const { stream } = await createDataflow();
    expect(await errorOf(await postEvents(stream, "p", 1, []))).toMatchObject({ status: 400, code: "INVALID_REQUEST" });
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (method === "parameters" || path === "/v1/openapi.json") continue;
        expect(Object.keys(operation.responses["503"]?.headers ?? {}), `${method} ${path}`).toEqual(["Retry-After"]);
        expect(Object.keys(operation.responses["401"]?.headers ?? {}), `${method} ${path}`).toEqual(["WWW-Authenticate"]);
      }
    }
    const unauthorized = await call("GET", "/v1/status", undefined, { authorization: "Bearer wrong" });
    expect(unauthorized.headers.get("www-authenticate")).toBe('Bearer realm="flux"');
  }, 20_000);
});

describe("subscribe cursors", () => {
  it("Last-Event-ID wins over ?cursor= (a reconnecting EventSource keeps its first URL)", async () => {
    const { id, stream } = await createDataflow({ partitions: 1, window: { kind: "tumbling", sizeMs: 1_000 } });
    for (let second = 0; second < 4; second++) expect((await postEvents(stream, "p", second + 1, [{ page: "a", ts: second * 1_000, bytes: 1 }])).status).toBe(200);
    const all = await subscribe(id, 300);
    expect(all.map((e) => e.id)).toEqual(["1", "2", "3"]);
    const res = await call("GET", `/v1/dataflows/${id}/subscribe?maxMs=300&cursor=0`, undefined, { "last-event-id": "2" });
    const ids = (await res.text()).split("\n").filter((line) => line.startsWith("id: ")).map((line) => line.slice(4));
    expect(ids).toEqual(["3"]);
  }, 20_000);
});
