/**
 * The audit's two cases over the API: a dataflow reading a path no event of its stream can
 * hold is refused (400), and so is a schema replacement that would leave an existing
 * dataflow reading such a path (409); before, both were accepted and every later post to
 * the stream was refused. Paths events can hold stay accepted.
 */
import { describe, expect, it } from "vitest";
import { call, postEvents, results, uniqueName } from "../helpers/api.ts";

const window = { kind: "tumbling", sizeMs: 10_000 };

async function errorOf(res: Response) {
  const body = (await res.json()) as { error: { code: string; message: string; details?: unknown } };
  return { status: res.status, ...body.error };
}

/** A dataflow on `stream` summing `field` per `k`, without a time field. */
function sumSpec(stream: string, field: string) {
  return { stream, key: "k", window, aggregates: { s: { op: "sum", field } }, partitions: 1 };
}

describe("stream schemas: paths inside declared objects", () => {
  it("refuse a dataflow reading below a field declared as another type; the stream keeps taking events", async () => {
    const stream = uniqueName("aud");
    expect((await call("PUT", `/v1/streams/${stream}`, { fields: { k: { type: "string" }, o: { type: "object" }, "o.p": { type: "string" } } })).status).toBe(201);
    const bad = await errorOf(await call("PUT", `/v1/dataflows/${uniqueName("bad")}`, sumSpec(stream, "o.p.q")));
    expect(bad).toMatchObject({ status: 400, code: "INVALID_REQUEST" });
    expect(bad.message).toContain("aggregates.s.field: 'o.p' is declared as string, so no event holds 'o.p.q'");
    // A path inside the object, and a declared nested one, still fit.
    const good = uniqueName("good");
    expect((await call("PUT", `/v1/dataflows/${good}`, sumSpec(stream, "o.n"))).status).toBe(201);
    expect((await postEvents(stream, "p1", 1, [{ k: "a", o: { p: "x", n: 2 } }])).status).toBe(200);
    expect((await results(good)).map((r) => r.values.s)).toEqual([2]);
  }, 20_000);

  it("refuse a replacement closing an object a dataflow reads an undeclared path of, and accept one it fits", async () => {
    const stream = uniqueName("aud");
    expect((await call("PUT", `/v1/streams/${stream}`, { fields: { k: { type: "string" }, o: { type: "object" } } })).status).toBe(201);
    const id = uniqueName("df");
    expect((await call("PUT", `/v1/dataflows/${id}`, sumSpec(stream, "o.q"))).status).toBe(201);
    const closed = { fields: { k: { type: "string" }, o: { type: "object" }, "o.x": { type: "number", required: false } }, additionalFields: false };
    const conflict = await errorOf(await call("PUT", `/v1/streams/${stream}`, closed));
    expect(conflict).toMatchObject({ status: 409, code: "SPEC_CONFLICT" });
    expect(conflict.message).toContain(`dataflow '${id}'`);
    expect(conflict.message).toContain("no event holds the undeclared 'o.q'");
    expect((await postEvents(stream, "p1", 1, [{ k: "a", o: { q: 3 } }])).status).toBe(200);
    // Closed with `o.q` declared, or with `o` declaring no fields of its own, it still fits.
    const declared = await call("PUT", `/v1/streams/${stream}`, { ...closed, fields: { ...closed.fields, "o.q": { type: "number" } } });
    expect(declared.status).toBe(200);
    expect(((await declared.json()) as { status: string }).status).toBe("updated");
    expect((await call("PUT", `/v1/streams/${stream}`, { fields: { k: { type: "string" }, o: { type: "object" } }, additionalFields: false })).status).toBe(200);
  }, 20_000);
});
