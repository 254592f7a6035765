/**
 * The defects of issue 11 through the Worker: dotted filter paths count, a batch filtered
 * out entirely is no duplicate, late records are reported, and PUT bodies are read
 * strictly (nesting, UTF-8, `__proto__`, content type), each refusal changing nothing.
 */
import { describe, expect, it } from "vitest";
import { exports } from "cloudflare:workers";
import { call, clicksSpec, createDataflow, postEvents, results, uniqueName } from "../helpers/api.ts";

async function errorOf(res: Response): Promise<{ status: number; code: string; message: string }> {
  const body = (await res.json()) as { error: { code: string; message: string } };
  return { status: res.status, code: body.error.code, message: body.error.message };
}


/** Sends raw bytes to a PUT route (`call` would send text as UTF-8). */
function putBytes(path: string, bytes: Uint8Array, contentType = "application/json"): Promise<Response> {
  return exports.default.fetch(new Request(`https://flux.test${path}`, { method: "PUT", body: bytes, headers: { authorization: "Bearer test-token", "content-type": contentType } }));
}

const nested = (op: "and" | "not", levels: number): unknown => {
  let expr: unknown = { field: "page", op: "eq", value: "a" };
  for (let i = 0; i < levels; i++) expr = op === "and" ? { and: [expr] } : { not: expr };
  return expr;
};

async function expectNoDataflow(id: string) {
  expect((await call("GET", `/v1/dataflows/${id}`)).status).toBe(404);
}

describe("dotted field paths and the ingest answer", () => {
  it("a filter on flow.bytes reads the nested field, also on a declared stream (defect 1)", async () => {
    const stream = uniqueName("flows");
    const declared = await call("PUT", `/v1/streams/${stream}`, { fields: { page: { type: "string" }, ts: { type: "time" }, "flow.bytes": { type: "integer" } } });
    expect(declared.status).toBe(201);
    const id = uniqueName("df");
    const spec = { stream, key: "page", timeField: "ts", window: { kind: "tumbling", sizeMs: 10_000 }, aggregates: { n: { op: "count" }, b: { op: "sum", field: "flow.bytes" } }, filter: { field: "flow.bytes", op: "gt", value: 100 }, partitions: 1 };
    expect((await call("PUT", `/v1/dataflows/${id}`, spec)).status).toBe(201);
    const res = await postEvents(stream, "p", 1, [{ page: "a", ts: 1, flow: { bytes: 500 } }, { page: "a", ts: 2, flow: { bytes: 50 } }]);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { dataflows: { records: unknown }[] }).dataflows[0]?.records).toEqual({ accepted: 1, filtered: 1, late: 0 });
    expect((await results(id)).map((r) => r.values)).toEqual([{ n: 1, b: 500 }]);
  });

  it("a batch whose events are all filtered out is not a duplicate (defect 2)", async () => {
    const { stream } = await createDataflow({ filter: { field: "bytes", op: "gt", value: 1000 } });
    const body = (await (await postEvents(stream, "p", 1, [{ page: "a", ts: 1, bytes: 1 }])).json()) as Record<string, unknown>;
    expect(body).toMatchObject({ duplicate: false, dataflows: [{ partitions: [], records: { accepted: 0, filtered: 1, late: 0 } }] });
  });

  it("reports records dropped as late in the answer", async () => {
    const { stream } = await createDataflow({ partitions: 1 });
    expect((await postEvents(stream, "p", 1, [{ page: "a", ts: 100_000, bytes: 1 }])).status).toBe(200);
    const body = (await (await postEvents(stream, "p", 2, [{ page: "a", ts: 5, bytes: 1 }, { page: "a", ts: 100_001, bytes: 1 }])).json()) as Record<string, unknown>;
    expect(body).toMatchObject({ duplicate: false, dataflows: [{ records: { accepted: 2, filtered: 0, late: 1 }, partitions: [{ late: 1, duplicate: false }] }] });
  });
});

describe("strict request bodies", () => {
  it.each([
    ["1,000 levels of and", nested("and", 1000)],
    ["1,300 levels of not", nested("not", 1300)],
  ])("refuses a filter of %s with 400 naming the limit (defect 3)", async (_what, filter) => {
    const id = uniqueName("df");
    const err = await errorOf(await call("PUT", `/v1/dataflows/${id}`, clicksSpec(uniqueName("s"), { filter })));
    expect(err).toMatchObject({ status: 400, code: "INVALID_REQUEST" });
    expect(err.message).toMatch(/^the body nests more than 64 levels of objects and arrays \(at filter\./);
    await expectNoDataflow(id);
  });

  it("refuses invalid UTF-8 in a stream schema and a dataflow spec (defect 4)", async () => {
    const stream = uniqueName("s");
    const bad = (text: string) => new Uint8Array([...new TextEncoder().encode(text.slice(0, text.indexOf("@"))), 0xff, 0xfe, ...new TextEncoder().encode(text.slice(text.indexOf("@") + 1))]);
    const schemaRes = await putBytes(`/v1/streams/${stream}`, bad('{"fields":{"na@me":{"type":"string"}}}'));
    expect(await errorOf(schemaRes)).toMatchObject({ status: 400, code: "INVALID_JSON", message: "the body is not valid UTF-8; send it encoded as UTF-8" });
    expect((await call("GET", `/v1/streams/${stream}`)).status).toBe(404);
    const id = uniqueName("df");
    const specRes = await putBytes(`/v1/dataflows/${id}`, bad(JSON.stringify(clicksSpec(stream, { key: "pa@ge" }))));
    expect(await errorOf(specRes)).toMatchObject({ status: 400, code: "INVALID_JSON" });
    await expectNoDataflow(id);
  });

  it("refuses __proto__ keys in aggregates and stream fields (defect 5)", async () => {
    const stream = uniqueName("s");
    const id = uniqueName("df");
    const spec = JSON.stringify(clicksSpec(stream)).replace('"aggregates":{', '"aggregates":{"__proto__":{"op":"bogus"},');
    expect(await errorOf(await call("PUT", `/v1/dataflows/${id}`, spec))).toEqual({ status: 400, code: "INVALID_REQUEST", message: "'__proto__' is not allowed as a key (at aggregates.__proto__)" });
    await expectNoDataflow(id);
    const schema = '{"fields":{"page":{"type":"string"},"__proto__":{"type":"string"}}}';
    expect(await errorOf(await call("PUT", `/v1/streams/${stream}`, schema))).toMatchObject({ status: 400, code: "INVALID_REQUEST" });
    expect((await call("GET", `/v1/streams/${stream}`)).status).toBe(404);
  });

  it("refuses a key sent twice in one object, naming it, instead of keeping the last", async () => {
    const id = uniqueName("df");
    const stream = uniqueName("s");
    const spec = JSON.stringify(clicksSpec(stream, { partitions: 1 })).replace('"partitions":1', '"partitions":1,"partitions":8');
    const error = await errorOf(await call("PUT", `/v1/dataflows/${id}`, spec));
    expect(error).toEqual({ status: 400, code: "INVALID_REQUEST", message: "the key 'partitions' appears twice in one object (at partitions): send each key once" });
    await expectNoDataflow(id);
    // Escapes spell the same key, and nested objects are checked too.
    const nestedTwice = JSON.stringify(clicksSpec(stream)).replace('"n":{"op":"count"}', '"n":{"op":"count","\\u006fp":"count"}');
    expect((await errorOf(await call("PUT", `/v1/dataflows/${id}`, nestedTwice))).message).toBe("the key 'op' appears twice in one object (at aggregates.n.op): send each key once");
    await expectNoDataflow(id);
    const mint = await call("POST", "/v1/admin/tokens", '{"scope":"read","dataflows":["a"],"scope":"admin","ttlSeconds":60}', { authorization: "Bearer test-admin-token" });
    expect(await errorOf(mint)).toMatchObject({ status: 400, code: "INVALID_REQUEST", message: "the key 'scope' appears twice in one object (at scope): send each key once" });
    // The same key in two different objects is fine.
    expect((await call("PUT", `/v1/dataflows/${id}`, clicksSpec(stream, { partitions: 1 }))).status).toBe(201);
  });

  it("answers 415 to a PUT body that is not JSON (defect 6)", async () => {
    const id = uniqueName("df");
    const stream = uniqueName("s");
    const spec = JSON.stringify(clicksSpec(stream));
    for (const contentType of ["text/plain", "application/x-www-form-urlencoded", ""]) {
      const err = await errorOf(await call("PUT", `/v1/dataflows/${id}`, spec, { "content-type": contentType }));
      expect(err).toMatchObject({ status: 415, code: "UNSUPPORTED_MEDIA_TYPE" });
      expect(err.message).toMatch(/^send the body as application\/json/);
    }
    await expectNoDataflow(id);
    expect((await errorOf(await call("PUT", `/v1/streams/${stream}`, '{"fields":{"a":{"type":"string"}}}', { "content-type": "text/plain" }))).status).toBe(415);
    const latin1 = await errorOf(await call("PUT", `/v1/dataflows/${id}`, spec, { "content-type": "application/json; charset=latin1" }));
    expect(latin1).toMatchObject({ status: 415, code: "UNSUPPORTED_MEDIA_TYPE" });
    expect(latin1.message).toMatch(/UTF-8 \(charset was 'latin1'/);
    await expectNoDataflow(id);
    expect((await call("PUT", `/v1/dataflows/${id}`, spec, { "content-type": "application/json; charset=UTF-8" })).status).toBe(201);
  });

  it("names the field and what was expected, and does not call a parsed body invalid JSON", async () => {
    const err = await errorOf(await call("PUT", `/v1/dataflows/${uniqueName("df")}`, clicksSpec(uniqueName("s"), { window: { kind: "tumbling", sizeMs: 1.5 } })));
    expect(err).toEqual({ status: 400, code: "INVALID_REQUEST", message: "invalid request body: window.sizeMs: must be an integer, got 1.5" });
  });
});
