/** `POST /v1/admin/replicas/{name}/fault` with faults on: a replica name whose slashes were not URL-encoded is no route, and the 404 says how to send it. */
import { describe, expect, it } from "vitest";
import { call, createDataflow } from "../helpers/api.ts";

const ADMIN = { authorization: "Bearer test-admin-token" };

describe("the fault endpoint's paths", () => {
  it("answers a replica name with raw slashes 404, telling to URL-encode it; encoded, it works", async () => {
    const { id } = await createDataflow({ partitions: 1 });
    const raw = await call("POST", `/v1/admin/replicas/${id}/p0/g0/fault`, { kind: "heal" }, ADMIN);
    expect(raw.status).toBe(404);
    const body = (await raw.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("NOT_FOUND");
    expect(body.error.message).toBe(`no route for POST /v1/admin/replicas/${id}/p0/g0/fault: URL-encode the replica name's slashes (${id}%2Fp0%2Fg0)`);
    const encoded = await call("POST", `/v1/admin/replicas/${encodeURIComponent(`${id}/p0/g0`)}/fault`, { kind: "heal" }, ADMIN);
    expect(encoded.status).toBe(200);
  });
});
