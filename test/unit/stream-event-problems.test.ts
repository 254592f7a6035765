/** The problems a stream schema reports for posted events say what was expected, in words a person can act on. */
import { describe, expect, it } from "vitest";
import { checkStreamEvents } from "../../shared/ingest/check-stream-events.ts";
import { StreamSchemaSchema } from "../../shared/wire/stream-schema.ts";
import { fluxErrorOf } from "../helpers/flux-error.ts";

const schema = StreamSchemaSchema.parse({ fields: { n: { type: "integer" }, ts: { type: "time" } } });

function problemsOf(event: Record<string, unknown>): string[] {
  const err = fluxErrorOf(() => checkStreamEvents("s", schema, [{ n: 1, ts: 0, ...event }]));
  return (err.details as { problems: { field: string; problem: string }[] }).problems.map((p) => `${p.field}: ${p.problem}`);
}

describe("stream schema problems", () => {
  it("an integer field holding a string asks for an integer, not just a number", () => {
    expect(problemsOf({ n: "7" })).toEqual(['n: must be an integer, got "7"']);
    expect(problemsOf({ n: 1.5 })).toEqual(["n: must be an integer, got 1.5"]);
    expect(problemsOf({ n: undefined })).toEqual(["n: must be an integer (missing)"]);
  });

  it("a time field holding text that is no date-time names both accepted forms", () => {
    expect(problemsOf({ ts: "yesterday" })).toEqual(["ts: must be epoch milliseconds (at least 0) or an ISO-8601 date-time with a zone, such as 2026-12-01T08:48:00Z"]);
    expect(problemsOf({ ts: -1 })).toEqual(["ts: must be at least 0, got -1"]);
  });
});
