/** `GET /v1/admin/counters` (issue 12): this isolate's calls, rows and Worker requests, behind the admin token. */
import { describe, expect, it } from "vitest";
import { CountersSchema } from "../../shared/wire/admin.ts";
import { call, createDataflow, postEvents } from "../helpers/api.ts";

const ADMIN = { authorization: "Bearer test-admin-token" };

async function counters() {
  const res = await call("GET", "/v1/admin/counters", undefined, ADMIN);
  expect(res.status).toBe(200);
  return CountersSchema.parse(await res.json());
}

describe("the counters endpoint", () => {
  it("counts one posted batch's Worker request, replica calls and rows", async () => {
    const { stream } = await createDataflow({ partitions: 1, replication: 2 });
    const before = await counters();
    const res = await postEvents(stream, "p", 1, [{ page: "a", ts: 1, bytes: 3 }]);
    expect(res.status).toBe(200);
    const after = await counters();
    // The POST and the second GET.
    expect(after.workerRequests - before.workerRequests).toBe(2);
    expect(after.callsTotal).toBeGreaterThan(before.callsTotal);
    expect(after.callsTotal).toBe(Object.values(after.calls).reduce((a, b) => a + b, 0));
    expect(after.rowsWritten).toBeGreaterThan(before.rowsWritten);
    expect(after.rowsRead).toBeGreaterThanOrEqual(before.rowsRead);
  });

  it("refuses the API token (403) and a missing token (401)", async () => {
    expect((await call("GET", "/v1/admin/counters")).status).toBe(403);
    expect((await call("GET", "/v1/admin/counters", undefined, { authorization: "" })).status).toBe(401);
  });
});

describe("concurrent posts to one partition", () => {
  it("share write calls (router coalescing) and forwards (group commit), each answered on its own", async () => {
    const { stream } = await createDataflow({ partitions: 1, replication: 2 });
    const before = await counters();
    const posts = 40;
    const statuses = await Promise.all(
      Array.from({ length: posts }, (_, i) => postEvents(stream, `p${i % 4}`, 1 + Math.floor(i / 4), [{ page: "a", ts: i, bytes: 1 }]).then((r) => r.status)),
    );
    expect(statuses).toEqual(Array.from({ length: posts }, () => 200));
    const after = await counters();
    const writes = (after.calls.write ?? 0) - (before.calls.write ?? 0);
    const forwards = (after.calls.replicate ?? 0) - (before.calls.replicate ?? 0);
    const rows = `${after.rowsWritten - before.rowsWritten} rows written, ${after.rowsRead - before.rowsRead} read`;
    console.log(`${posts} concurrent posts: ${writes} write calls, ${forwards} forwards, ${after.callsTotal - before.callsTotal} calls in all, ${rows}`);
    expect(writes).toBeGreaterThanOrEqual(1);
    expect(writes).toBeLessThan(posts);
    expect(forwards).toBeLessThan(posts);
  });
});
