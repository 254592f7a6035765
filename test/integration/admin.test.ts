/** The fault-injection endpoint does not exist unless configuration enables it (issue 3). */
import { describe, expect, it } from "vitest";
import { call, createDataflow } from "../helpers/api.ts";

describe("the fault endpoint without configuration", () => {
  it("does not exist (404), whatever the token", async () => {
    const { id } = await createDataflow();
    const body = (await (await call("GET", `/v1/dataflows/${id}`)).json()) as { dataflow: { partitions: { primary: string }[] } };
    const name = encodeURIComponent(body.dataflow.partitions[0]?.primary ?? "");
    for (const token of ["test-admin-token", "test-token", "wrong"]) {
      const res = await call("POST", `/v1/admin/replicas/${name}/fault`, { kind: "crash" }, { authorization: `Bearer ${token}` });
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("NOT_FOUND");
    }
  });

  it("has no counters endpoint either (404)", async () => {
    const res = await call("GET", "/v1/admin/counters", undefined, { authorization: "Bearer test-admin-token" });
    expect(res.status).toBe(404);
  });
});
