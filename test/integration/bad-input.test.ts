/**
 * Every bad input gets a 4xx with the one error envelope and changes nothing (issue 2 §7):
 * results, LSNs and dedup state are compared before and after each attempt.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call, createDataflow, postEvents, results } from "../helpers/api.ts";

let id = "";
let stream = "";

async function snapshot() {
  const status = (await (await call("GET", "/v1/status")).json()) as { dataflows: { id: string }[] };
  return { results: await results(id), status: status.dataflows.find((d) => d.id === id) };
}

async function expectError(res: Response, status: number, code: string) {
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect({ status: res.status, code: body.error.code }, body.error.message).toEqual({ status, code });
  expect(body.error.message.length).toBeGreaterThan(5);
  return body.error;
}

const good = [{ page: "a", ts: 1, bytes: 1 }];
const ndjson = { "content-type": "application/x-ndjson" };

const cases: [string, () => Promise<Response>, number, string][] = [
  ["malformed JSON", () => postEvents(stream, "p", 2, '[{"page":"a",'), 400, "INVALID_JSON"],
  ["malformed NDJSON line", () => postEvents(stream, "p", 2, '{"page":"a","ts":1,"bytes":1}\n{"page":', ndjson), 400, "INVALID_JSON"],
  ["a JSON object instead of an array", () => postEvents(stream, "p", 2, { page: "a" }), 400, "INVALID_REQUEST"],
  ["an empty batch", () => postEvents(stream, "p", 2, []), 400, "INVALID_REQUEST"],
  ["an event that is not an object", () => postEvents(stream, "p", 2, [...good, 7]), 400, "INVALID_EVENT"],
  ["a missing key", () => postEvents(stream, "p", 2, [...good, { ts: 1, bytes: 1 }]), 400, "INVALID_EVENT"],
  ["a key of the wrong type", () => postEvents(stream, "p", 2, [...good, { page: true, ts: 1, bytes: 1 }]), 400, "INVALID_EVENT"],
  ["a key that is too long", () => postEvents(stream, "p", 2, [{ page: "k".repeat(300), ts: 1, bytes: 1 }]), 400, "INVALID_EVENT"],
  ["a time that is not a time", () => postEvents(stream, "p", 2, [...good, { page: "a", ts: "yesterday", bytes: 1 }]), 400, "INVALID_EVENT"],
  ["an aggregated field that is not a number", () => postEvents(stream, "p", 2, [...good, { page: "a", ts: 1, bytes: "9" }]), 400, "INVALID_EVENT"],
  ["an aggregated field too large to sum safely", () => postEvents(stream, "p", 2, [...good, { page: "a", ts: 1, bytes: 1e308 }]), 400, "INVALID_EVENT"],
  ["an event time far in the future", () => postEvents(stream, "p", 2, [...good, { page: "a", ts: "9999-12-31T00:00Z", bytes: 1 }]), 400, "INVALID_EVENT"],
  ["a WebSocket upgrade to the ingest route", () => postEvents(stream, "p", 2, good, { upgrade: "websocket" }), 400, "INVALID_REQUEST"],
  // What the runtime hands the Worker for such a POST (measured in local workerd): a GET without the body.
  ["a WebSocket upgrade as the runtime delivers it", () => call("GET", `/v1/streams/${stream}/events`, undefined, { upgrade: "websocket", connection: "Upgrade" }), 400, "INVALID_REQUEST"],
  ["a missing Flux-Producer-Id", () => call("POST", `/v1/streams/${stream}/events`, good, { "flux-seq": "2" }), 400, "INVALID_REQUEST"],
  ["a missing Flux-Seq", () => call("POST", `/v1/streams/${stream}/events`, good, { "flux-producer-id": "p" }), 400, "INVALID_REQUEST"],
  ["Flux-Seq 0", () => postEvents(stream, "p", 0, good), 400, "INVALID_REQUEST"],
  ["a non-numeric Flux-Seq", () => call("POST", `/v1/streams/${stream}/events`, good, { "flux-producer-id": "p", "flux-seq": "two" }), 400, "INVALID_REQUEST"],
  ["a forged producer id", () => postEvents(stream, "p/../x", 2, good), 400, "INVALID_REQUEST"],
  ["an unknown stream", () => postEvents("no-such-stream", "p", 2, good), 404, "UNKNOWN_STREAM"],
  ["an invalid stream name", () => postEvents("bad%20name", "p", 2, good), 400, "INVALID_REQUEST"],
  ["a body over the byte limit", () => postEvents(stream, "p", 2, JSON.stringify([{ page: "a", ts: 1, bytes: 1, pad: "x".repeat(70_000) }])), 413, "PAYLOAD_TOO_LARGE"],
  ["a batch over the event limit", () => postEvents(stream, "p", 2, Array.from({ length: 101 }, () => good[0])), 413, "PAYLOAD_TOO_LARGE"],
  ["an unsupported content type", () => postEvents(stream, "p", 2, "page=a", { "content-type": "text/plain" }), 415, "UNSUPPORTED_MEDIA_TYPE"],
  ["a charset other than UTF-8", () => postEvents(stream, "p", 2, good, { "content-type": "application/json; charset=latin1" }), 415, "UNSUPPORTED_MEDIA_TYPE"],
  ["a spec in a charset other than UTF-8", () => call("PUT", `/v1/dataflows/${id}-latin1`, { stream, key: "page", window: { kind: "tumbling", sizeMs: 1 }, aggregates: { n: { op: "count" } } }, { "content-type": 'application/json; charset="ISO-8859-1"' }), 415, "UNSUPPORTED_MEDIA_TYPE"],
  ["results of an unknown dataflow", () => call("GET", "/v1/dataflows/nope/results"), 404, "UNKNOWN_DATAFLOW"],
  ["results with a bad range", () => call("GET", `/v1/dataflows/${id}/results?from=soon`), 400, "INVALID_REQUEST"],
  ["results with from after to", () => call("GET", `/v1/dataflows/${id}/results?from=2000&to=1000`), 400, "INVALID_REQUEST"],
  ["results with an unknown parameter", () => call("GET", `/v1/dataflows/${id}/results?keys=a`), 400, "INVALID_REQUEST"],
  ["a spec with an unknown field", () => call("PUT", `/v1/dataflows/${id}`, { stream, key: "page", window: { kind: "tumbling", sizeMs: 1 }, aggregates: { n: { op: "count" } }, colour: "red" }), 400, "INVALID_REQUEST"],
  ["a spec for an existing id with another spec", () => call("PUT", `/v1/dataflows/${id}`, { stream, key: "page", window: { kind: "tumbling", sizeMs: 5 }, aggregates: { n: { op: "count" } } }), 409, "SPEC_CONFLICT"],
  ["a malformed spec body", () => call("PUT", `/v1/dataflows/${id}`, "{nope"), 400, "INVALID_JSON"],
  ["an unknown path", () => call("GET", "/v1/nothing-here"), 404, "NOT_FOUND"],
];

describe("bad input", () => {
  beforeAll(async () => {
    ({ id, stream } = await createDataflow());
    expect((await postEvents(stream, "p", 1, [{ page: "a", ts: 1, bytes: 1 }, { page: "b", ts: 2, bytes: 2 }])).status).toBe(200);
  });

  it.each(cases)("rejects %s with a 4xx and changes nothing", async (_name, send, status, code) => {
    const before = await snapshot();
    await expectError(await send(), status, code);
    expect(await snapshot()).toEqual(before);
  });

  it("lists every problem of an invalid batch with the event index and field", async () => {
    const error = await expectError(
      await postEvents(stream, "p", 3, [{ page: "a", ts: 1, bytes: 1 }, { page: "b", ts: "x", bytes: "y" }, { page: "c", ts: "2026-12-01T10:00:00", bytes: 1 }]),
      400,
      "INVALID_EVENT",
    );
    expect(error).toMatchObject({
      details: {
        problemCount: 3,
        problems: [
          { index: 1, field: "ts", problem: "must be epoch milliseconds or an ISO-8601 date-time with a zone, such as 2026-12-01T08:48:00Z" },
          { index: 1, field: "bytes", problem: "must be a finite number" },
          // A date-time without a zone is ISO-8601 too: the problem says what is missing.
          { index: 2, field: "ts", problem: "must be epoch milliseconds or an ISO-8601 date-time with a zone, such as 2026-12-01T08:48:00Z" },
        ],
      },
    });
  });

  it("names the bad field of a malformed spec", async () => {
    const res = await call("PUT", "/v1/dataflows/bad-spec", {
      stream, key: "page", window: { kind: "tumbling", sizeMs: -5 }, aggregates: { total: { op: "sum" } },
    });
    const error = await expectError(res, 400, "INVALID_REQUEST");
    expect(error.message).toContain("window.sizeMs");
    expect(error.message).toContain("aggregates.total.field");
    expect((await call("GET", "/v1/dataflows/bad-spec")).status).toBe(404);
  });

  it("still accepts the next good batch after all of that", async () => {
    expect((await postEvents(stream, "p", 2, [{ page: "a", ts: 3, bytes: 5 }])).status).toBe(200);
    expect((await results(id)).map((r) => [r.key, r.values.n])).toEqual([["a", 2], ["b", 1]]);
  });
});
