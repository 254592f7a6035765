/**
 * Issue 26: every route authenticates, then validates the whole request, then compares it
 * with stored state. A spec that breaks a rule (here: it does not fit its stream's declared
 * schema) is a 400 naming the fault whether its id is new or exists with another spec,
 * never a 409 about the difference, and it changes nothing.
 */
import { describe, expect, it } from "vitest";
import { call, postEvents, uniqueName } from "../helpers/api.ts";
import { DECLARED_SCHEMA, DECLARED_SPEC, declaredSpecRenamed, FIXTURES, RENAMED_AT, RENAMED_TO } from "../helpers/fuzz-requests.ts";

const window = { kind: "tumbling", sizeMs: 10_000 };
const aggregates = { n: { op: "count" } };

/** The answer's status, and its error's code, message and details when it is one. */
async function answerOf(res: Response): Promise<{ status: number; code?: string; message?: string; details?: { issues?: { path: unknown[] }[] } }> {
  const body = (await res.json()) as { error?: { code: string; message: string; details?: { issues?: { path: unknown[] }[] } } };
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
    const fresh = await answerOf(await call("PUT", `/v1/dataflows/${uniqueName("df")}`, invalid));
    const existing = await answerOf(await call("PUT", `/v1/dataflows/${id}`, invalid));
    expect(fresh).toMatchObject({ status: 400, code: "INVALID_REQUEST" });
    expect(existing).toEqual(fresh);
    expect(existing.message).toContain(`timeField: stream '${stream}' declares no field '${"t".repeat(129)}'`);
    expect(existing.details?.issues?.map((issue) => issue.path)).toEqual([["timeField"]]);

    const stored = (await (await call("GET", `/v1/dataflows/${id}`)).json()) as { dataflow: { spec: { timeField: string } } };
    expect(stored.dataflow.spec.timeField).toBe("ts");
    // A valid spec that differs is still the documented conflict (or, differing in a higher partition count alone, a rescale).
    expect((await answerOf(await call("PUT", `/v1/dataflows/${id}`, { ...spec, timeField: "page" }))).status).toBe(400);
    expect(await answerOf(await call("PUT", `/v1/dataflows/${id}`, { ...spec, window: { kind: "tumbling", sizeMs: 5_000 } }))).toMatchObject({ status: 409, code: "SPEC_CONFLICT" });
    expect((await call("PUT", `/v1/dataflows/${id}`, { ...spec, partitions: 2 })).status).toBe(202);
  }, 20_000);

  it("judges posted events against the stream's declared schema before saying no dataflow reads it", async () => {
    const stream = uniqueName("vo");
    expect((await call("PUT", `/v1/streams/${stream}`, { fields: { page: { type: "string" } } })).status).toBe(201);
    const bad = await answerOf(await postEvents(stream, "p", 1, [{ page: 7 }]));
    expect(bad).toMatchObject({ status: 400, code: "INVALID_EVENT" });
    // A batch that fits reaches the stored state, where nothing reads the stream yet.
    expect(await answerOf(await postEvents(stream, "p", 2, [{ page: "home" }]))).toMatchObject({ status: 404, code: "UNKNOWN_STREAM" });
  }, 20_000);

  it("gives every variant of a stored spec under its own id the answer a fresh id gets (400), or a conflict (or a rescale) only when it is valid", async () => {
    expect((await call("PUT", `/v1/streams/${FIXTURES.declaredStream}`, DECLARED_SCHEMA)).status).toBe(201);
    expect((await call("PUT", `/v1/dataflows/${FIXTURES.declaredDataflow}`, DECLARED_SPEC)).status).toBe(201);
    // What is stored: a valid spec differing in a higher partition count alone grows the dataflow (202).
    let stored: { partitions: number } = DECLARED_SPEC;
    const answers = new Map<number, number>();
    let rescales = 0;
    for (const at of RENAMED_AT) {
      for (const name of RENAMED_TO) {
        for (const partitions of [1, 2]) {
          const spec = declaredSpecRenamed(at, name, partitions);
          const existing = await answerOf(await call("PUT", `/v1/dataflows/${FIXTURES.declaredDataflow}`, spec));
          const freshId = uniqueName("fresh");
          const fresh = await answerOf(await call("PUT", `/v1/dataflows/${freshId}`, spec));
          const where = `${at} → ${name.slice(0, 20)}, partitions ${partitions}`;
          answers.set(existing.status, (answers.get(existing.status) ?? 0) + 1);
          if (fresh.status === 400) expect(existing, where).toEqual(fresh);
          else {
            expect(fresh.status, where).toBe(201);
            const onlyPartitions = JSON.stringify({ ...spec, partitions: stored.partitions }) === JSON.stringify(stored);
            const grows = onlyPartitions && spec.partitions > stored.partitions;
            // The stored spec again: 200, or 202 while the growth's moves still run.
            const expected = JSON.stringify(spec) === JSON.stringify(stored) ? (stored === DECLARED_SPEC ? [200] : [200, 202]) : grows ? [202] : [409];
            expect(expected, where).toContain(existing.status);
            if (grows) {
              stored = spec;
              rescales += 1;
            }
            expect((await call("DELETE", `/v1/dataflows/${freshId}`)).status, where).toBe(200);
          }
        }
      }
    }
    // Both kinds of answer were reached, so the comparison above meant something.
    expect(answers.get(400)).toBeGreaterThan(10);
    expect(answers.get(409)).toBeGreaterThan(0);
    // The one variant that only raises the partition count grew the dataflow; later ones compare with that.
    expect(rescales).toBe(1);
  }, 60_000);
});
