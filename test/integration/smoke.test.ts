import { describe, expect, it } from "vitest";
import { call, postEvents, uniqueName } from "../helpers/api.ts";

describe("smoke", () => {
  it("creates a dataflow, posts and reads", async () => {
    const id = uniqueName("df");
    const stream = uniqueName("s");
    const put = await call("PUT", `/v1/dataflows/${id}`, {
      stream, key: "page", timeField: "ts",
      window: { kind: "tumbling", sizeMs: 10000 },
      aggregates: { n: { op: "count" }, bytes: { op: "sum", field: "bytes" } },
      partitions: 4, replication: 2,
    });
    expect(put.status, await put.clone().text()).toBe(201);
    const post = await postEvents(stream, "p1", 1, [{ page: "a", ts: 1000, bytes: 5 }, { page: "b", ts: 2000, bytes: 7 }]);
    expect(post.status, await post.clone().text()).toBe(200);
    const res = await call("GET", `/v1/dataflows/${id}/results`);
    console.log(await res.text());
  });
});
