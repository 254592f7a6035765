/**
 * Declared stream schemas and custom operators over the API (issue 6): schemas are
 * stored and listed, events are validated against them (a bad batch changes nothing),
 * dataflows must fit the schema of their stream, and a schema change that would break a
 * dataflow is refused. Custom operators are listed and their parameters validated.
 */
import { describe, expect, it } from "vitest";
import { call, clicksSpec, postEvents, results, uniqueName } from "../helpers/api.ts";

const flowsSchema = {
  fields: {
    src: { type: "string" },
    dst: { type: "string" },
    "size.bytes": { type: "integer" },
    ts: { type: "time" },
    proto: { type: "string", required: false },
  },
};

async function errorOf(res: Response) {
  const body = (await res.json()) as { error: { code: string; message: string; details?: unknown } };
  return { status: res.status, ...body.error };
}

/** A dataflow over the flows stream: bytes per source, distinct destinations, top destinations. */
function flowsSpec(stream: string, overrides: Record<string, unknown> = {}) {
  return {
    stream,
    project: { src: "src", dst: "dst", bytes: "size.bytes", ts: "ts" },
    key: "src",
    timeField: "ts",
    window: { kind: "tumbling", sizeMs: 10_000 },
    aggregates: { bytes: { op: "sum", field: "bytes" }, dsts: { op: "distinct", field: "dst" }, top: { op: "topk", field: "dst", k: 2, weight: "bytes" } },
    partitions: 2,
    ...overrides,
  };
}

describe("stream schemas", () => {
  it("are declared, shown, listed, and re-declared idempotently", async () => {
    const stream = uniqueName("flows");
    const created = await call("PUT", `/v1/streams/${stream}`, flowsSchema);
    expect(created.status).toBe(201);
    const body = (await created.json()) as { status: string; stream: { name: string; schema: { additionalFields: boolean } } };
    expect(body.stream).toMatchObject({ name: stream, schema: { additionalFields: true } });
    expect((await call("PUT", `/v1/streams/${stream}`, flowsSchema)).status).toBe(200);
    expect(((await (await call("GET", `/v1/streams/${stream}`)).json()) as { stream: { name: string } }).stream.name).toBe(stream);
    const list = (await (await call("GET", "/v1/streams")).json()) as { streams: { name: string }[] };
    expect(list.streams.map((s) => s.name)).toContain(stream);
    expect(await errorOf(await call("GET", `/v1/streams/${uniqueName("none")}`))).toMatchObject({ status: 404, code: "UNKNOWN_STREAM" });
  });

  it("refuse a malformed declaration, naming the field", async () => {
    const stream = uniqueName("flows");
    const bad = await errorOf(await call("PUT", `/v1/streams/${stream}`, { fields: { src: { type: "text" } } }));
    expect(bad).toMatchObject({ status: 400, code: "INVALID_REQUEST" });
    expect(bad.message).toContain("fields.src.type");
    const nested = await errorOf(await call("PUT", `/v1/streams/${stream}`, { fields: { a: { type: "string" }, "a.b": { type: "number" } } }));
    expect(nested.message).toContain("'a' is declared as string, not object");
    const inherited = await errorOf(await call("PUT", `/v1/streams/${stream}`, { fields: { "meta.constructor": { type: "string", required: false } } }));
    expect(inherited.message).toContain("must not use a name of Object.prototype");
    expect((await call("GET", `/v1/streams/${stream}`)).status).toBe(404);
  });

  it("validate every posted event; a batch with a bad event changes nothing", async () => {
    const stream = uniqueName("flows");
    await call("PUT", `/v1/streams/${stream}`, { ...flowsSchema, additionalFields: false });
    const id = uniqueName("df");
    expect((await call("PUT", `/v1/dataflows/${id}`, flowsSpec(stream))).status).toBe(201);
    const flow = (src: string, dst: string, bytes: number) => ({ src, dst, size: { bytes }, ts: 1_000 });
    const ok = await postEvents(stream, "p", 1, [flow("a", "x", 10), flow("a", "y", 30), flow("a", "x", 5), flow("b", "x", 1)]);
    expect(ok.status).toBe(200);
    const before = await results(id);
    expect(before.map((r) => [r.key, r.values])).toEqual([
      ["a", { bytes: 45, dsts: 2, top: [{ value: "y", count: 30, error: 0 }, { value: "x", count: 15, error: 0 }] }],
      ["b", { bytes: 1, dsts: 1, top: [{ value: "x", count: 1, error: 0 }] }],
    ]);

    const bad = await errorOf(
      await postEvents(stream, "p", 2, [flow("a", "x", 1), { ...flow("a", "x", 1.5) }, { ...flow("a", "x", 1), proto: 6 }, { ...flow("a", "x", 1), extra: true }]),
    );
    expect(bad).toMatchObject({ status: 400, code: "INVALID_EVENT" });
    const problems = (bad.details as { problems: { index: number; field: string }[] }).problems;
    expect(problems.map((p) => [p.index, p.field])).toEqual([
      [1, "size.bytes"],
      [2, "proto"],
      [3, "extra"],
    ]);
    expect(await results(id)).toEqual(before);
    // The same seq is still free: nothing of the refused batch was recorded.
    expect((await postEvents(stream, "p", 2, [flow("c", "z", 2)])).status).toBe(200);
  });

  it("admit only dataflows that read declared fields of a fitting type", async () => {
    const stream = uniqueName("flows");
    await call("PUT", `/v1/streams/${stream}`, flowsSchema);
    const undeclared = await errorOf(await call("PUT", `/v1/dataflows/${uniqueName("df")}`, flowsSpec(stream, { project: { src: "src", dst: "dst", bytes: "size.packets", ts: "ts" } })));
    expect(undeclared).toMatchObject({ status: 400, code: "INVALID_REQUEST" });
    expect(undeclared.message).toContain("project.bytes: stream");
    const wrongType = await errorOf(
      await call("PUT", `/v1/dataflows/${uniqueName("df")}`, { ...flowsSpec(stream), project: undefined, aggregates: { total: { op: "sum", field: "dst" } } }),
    );
    expect(wrongType.message).toContain("aggregates.total.field: 'dst' is declared as string");
    // An optional field would let a conforming event without it refuse the whole batch.
    const optional = await errorOf(
      await call("PUT", `/v1/dataflows/${uniqueName("df")}`, { ...flowsSpec(stream), project: undefined, key: "src", aggregates: { protos: { op: "topk", field: "proto", k: 3 } } }),
    );
    expect(optional.message).toContain("aggregates.protos.field: 'proto' is optional");
    expect((await call("GET", "/v1/dataflows")).status).toBe(200);
  });

  it("refuse a new schema that an existing dataflow would not fit, and accept one it fits", async () => {
    const stream = uniqueName("flows");
    await call("PUT", `/v1/streams/${stream}`, flowsSchema);
    const id = uniqueName("df");
    const second = uniqueName("df");
    expect((await call("PUT", `/v1/dataflows/${id}`, flowsSpec(stream))).status).toBe(201);
    expect((await call("PUT", `/v1/dataflows/${second}`, flowsSpec(stream))).status).toBe(201);
    const { "size.bytes": _dropped, ...withoutBytes } = flowsSchema.fields;
    const conflict = await errorOf(await call("PUT", `/v1/streams/${stream}`, { fields: withoutBytes }));
    expect(conflict).toMatchObject({ status: 409, code: "SPEC_CONFLICT" });
    expect(conflict.message).toContain(`dataflow '${id}'`);
    expect(conflict.message).toContain(`'${second}'`);
    const named = (conflict.details as { dataflows: { dataflow: string; issues: unknown[] }[] }).dataflows;
    expect(named.map((d) => d.dataflow).sort()).toEqual([id, second].sort());
    expect(named.every((d) => d.issues.length > 0)).toBe(true);
    expect((await (await call("GET", `/v1/streams/${stream}`)).json()) as { stream: { schema: unknown } }).toMatchObject({ stream: { schema: flowsSchema } });
    const widened = await call("PUT", `/v1/streams/${stream}`, { fields: { ...flowsSchema.fields, "size.bytes": { type: "number" }, port: { type: "integer", required: false } } });
    expect(widened.status).toBe(200);
    expect(((await widened.json()) as { status: string }).status).toBe("updated");
  });

  it("do not touch undeclared streams: any object is accepted as before", async () => {
    const stream = uniqueName("clicks");
    expect((await call("PUT", `/v1/dataflows/${uniqueName("df")}`, clicksSpec(stream))).status).toBe(201);
    expect((await postEvents(stream, "p", 1, [{ page: "a", ts: 1, bytes: 1, anything: { at: "all" } }])).status).toBe(200);
  });
});

describe("custom operators over the API", () => {
  it("are listed with the JSON Schema of their parameters", async () => {
    const body = (await (await call("GET", "/v1/operators")).json()) as { operators: { name: string; description: string; params: { properties?: Record<string, unknown> } }[] };
    const hh = body.operators.find((o) => o.name === "heavy-hitters");
    expect(hh?.description).toMatch(/heavy-hitter/);
    expect(Object.keys(hh?.params.properties ?? {})).toEqual(expect.arrayContaining(["windowMs", "minBytes", "destinationField", "minDestinations"]));
  });

  it("refuse bad parameters and unknown names, naming the field", async () => {
    const spec = (operator: unknown) => ({ stream: uniqueName("flows"), key: "src", operator });
    const badParam = await errorOf(await call("PUT", `/v1/dataflows/${uniqueName("df")}`, spec({ name: "heavy-hitters", params: { windowMs: "10s", minBytes: 1 } })));
    expect(badParam).toMatchObject({ status: 400, code: "INVALID_REQUEST" });
    expect(badParam.message).toContain("operator.params.windowMs");
    const unknown = await errorOf(await call("PUT", `/v1/dataflows/${uniqueName("df")}`, spec({ name: "nope" })));
    expect(unknown.message).toContain("operator.name: no operator named 'nope' (registered: heavy-hitters)");
    const both = await errorOf(await call("PUT", `/v1/dataflows/${uniqueName("df")}`, { ...clicksSpec(uniqueName("s")), operator: { name: "heavy-hitters", params: { minBytes: 1 } } }));
    expect(both.message).toContain("window: a dataflow with an operator has no window");
  });
});
