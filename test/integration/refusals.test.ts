/** Refused ingest requests reach the status, per stream and code (issue 13, for the dashboard). */
import { describe, expect, it } from "vitest";
import type { StatusResponse } from "../../shared/wire/api.ts";
import { call, createDataflow, postEvents, uniqueName } from "../helpers/api.ts";
import { mint, bearer } from "../helpers/tokens.ts";

async function status(headers: Record<string, string> = {}): Promise<StatusResponse> {
  const res = await call("GET", "/v1/status", undefined, headers);
  expect(res.status).toBe(200);
  return (await res.json()) as StatusResponse;
}

describe("refusal counts in /v1/status", () => {
  it("counts refused batches by stream and code, and shows a read token its own streams only", async () => {
    const { id, stream } = await createDataflow();
    const unknown = uniqueName("nobody-reads");
    expect((await postEvents(stream, "p", 1, [])).status).toBe(400);
    expect((await postEvents(stream, "p", 2, "not json")).status).toBe(400);
    expect((await postEvents(unknown, "p", 1, [{ page: "a" }])).status).toBe(404);
    expect((await postEvents(stream, "p", 3, [{ page: "a", ts: 1, bytes: 1 }])).status).toBe(200);
    const deadline = Date.now() + 3_000;
    let body = await status();
    while (Date.now() < deadline && (body.refusals ?? []).filter((r) => r.stream === stream || r.stream === unknown).length < 3) body = await status();
    const mine = (body.refusals ?? []).filter((r) => r.stream === stream || r.stream === unknown).map(({ at: _at, ...r }) => r);
    expect(mine.sort((a, b) => a.code.localeCompare(b.code))).toEqual([
      { stream, code: "INVALID_JSON", count: 1 },
      { stream, code: "INVALID_REQUEST", count: 1 },
      { stream: unknown, code: "UNKNOWN_STREAM", count: 1 },
    ]);
    expect(body.faultsEnabled).toBe(false);
    const { token } = await mint({ scope: "read", dataflows: [id], ttlSeconds: 60 });
    const seen = new Set(((await status(bearer(token))).refusals ?? []).map((r) => r.stream));
    expect([...seen]).toEqual([stream]);
  });

  it("counts only POSTs, each under the code its answer carries (a validator's 400 too)", async () => {
    const { stream } = await createDataflow();
    // Other methods on the events path are not refused batches: their 404 is not counted.
    expect((await call("GET", `/v1/streams/${stream}/events`)).status).toBe(404);
    expect((await call("DELETE", `/v1/streams/${stream}/events`)).status).toBe(404);
    // A header the validator refuses (no error thrown: its own 400 answer).
    expect((await call("POST", `/v1/streams/${stream}/events`, [{ page: "a", ts: 1, bytes: 1 }], { "flux-producer-id": "p" })).status).toBe(400);
    expect((await postEvents(stream, "p", 1, [])).status).toBe(400);
    const deadline = Date.now() + 3_000;
    let body = await status();
    const mine = () => (body.refusals ?? []).filter((r) => r.stream === stream).map(({ at: _at, ...r }) => r);
    while (Date.now() < deadline && mine().reduce((n, r) => n + r.count, 0) < 2) body = await status();
    expect(mine()).toEqual([{ stream, code: "INVALID_REQUEST", count: 2 }]);
  });
});
