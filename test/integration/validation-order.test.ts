/**
 * Issue 26: every route authenticates, then validates the whole request, then compares it
 * with stored state. A spec that breaks a rule (here: it does not fit its stream's declared
 * schema) is a 400 naming the fault whether its id is new or exists with another spec,
 * never a 409 about the difference, and it changes nothing.
 */
import { describe, expect, it } from "vitest";
import { call, postEvents, uniqueName } from "../helpers/api.ts";

const window = { kind: "tumbling", sizeMs: 10_000 };
const aggregates = { n: { op: "count" } };

async function errorOf(res: Response) {
  const body = (await res.json()) as { error: { code: string; message: string; details?: { issues?: { path: unknown[] }[] } } };
  return { status: res.status, ...body.error };
}

describe("validation before comparison with stored state", () => {
  it("answers 400 for an invalid spec under an existing id, as for a new id, and changes nothing", async () => {
    const stream = uniqueName("vo");
    expect((await call("PUT", `/v1/streams/${stream}`, { fields: { page: { type: "string" }, ts: { type: "time" } } })).status).toBe(201);
    const id = uniqueName("df");
    const spec = { stream, key: "page", timeField: "ts", window, aggregates, partitions: 1 };
    expect((await call("PUT", `/v1/dataflows/${id}`, spec)).status).toBe(201);

    const invalid = { ...spec, timeField: "t".repeat(129) };
    const fresh = await errorOf(await call("PUT", `/v1/dataflows/${uniqueName("df")}`, invalid));
    const existing = await errorOf(await call("PUT", `/v1/dataflows/${id}`, invalid));
    expect(fresh).toMatchObject({ status: 400, code: "INVALID_REQUEST" });
    expect(existing).toEqual(fresh);
    expect(existing.message).toContain(`timeField: stream '${stream}' declares no field '${"t".repeat(129)}'`);
    expect(existing.details?.issues?.map((issue) => issue.path)).toEqual([["timeField"]]);

    const stored = (await (await call("GET", `/v1/dataflows/${id}`)).json()) as { dataflow: { spec: { timeField: string } } };
    expect(stored.dataflow.spec.timeField).toBe("ts");
    // A valid spec that differs is still the documented conflict.
    expect((await errorOf(await call("PUT", `/v1/dataflows/${id}`, { ...spec, timeField: "page" }))).status).toBe(400);
    expect(await errorOf(await call("PUT", `/v1/dataflows/${id}`, { ...spec, partitions: 2 }))).toMatchObject({ status: 409, code: "SPEC_CONFLICT" });
  }, 20_000);

  it("judges posted events against the stream's declared schema before saying no dataflow reads it", async () => {
    const stream = uniqueName("vo");
    expect((await call("PUT", `/v1/streams/${stream}`, { fields: { page: { type: "string" } } })).status).toBe(201);
    const bad = await errorOf(await postEvents(stream, "p", 1, [{ page: 7 }]));
    expect(bad).toMatchObject({ status: 400, code: "INVALID_EVENT" });
    // A batch that fits reaches the stored state, where nothing reads the stream yet.
    expect(await errorOf(await postEvents(stream, "p", 2, [{ page: "home" }]))).toMatchObject({ status: 404, code: "UNKNOWN_STREAM" });
  }, 20_000);
});
