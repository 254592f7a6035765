/** The dataflows API in workerd: creation with defaults, idempotent PUT, listing, status of replicas. */
import { describe, expect, it } from "vitest";
import { call, clicksSpec, uniqueName } from "../helpers/api.ts";

describe("dataflows API", () => {
  it("creates with defaults, is idempotent for the same spec, and lists and shows it", async () => {
    const id = uniqueName("df");
    const stream = uniqueName("s");
    const minimal = { stream, key: "page", window: { kind: "tumbling", sizeMs: 1000 }, aggregates: { n: { op: "count" } } };
    const created = await call("PUT", `/v1/dataflows/${id}`, minimal);
    expect(created.status).toBe(201);
    const body = (await created.json()) as { status: string; dataflow: { spec: Record<string, unknown>; partitions: { epoch: number; standby: string | null; status: string }[] } };
    expect(body.status).toBe("created");
    expect(body.dataflow.spec).toMatchObject({ partitions: 4, replication: 2, window: { allowedLatenessMs: 0 } });
    expect(body.dataflow.partitions).toHaveLength(4);
    expect(body.dataflow.partitions.every((p) => p.epoch === 1 && p.standby !== null && p.status === "healthy")).toBe(true);

    // A lower partition count is refused (growing is covered by rescale.test.ts).
    const resized = await call("PUT", `/v1/dataflows/${id}`, { ...minimal, partitions: 2 });
    expect(resized.status).toBe(409);
    const refusal = (await resized.json()) as { error: { code: string; message: string; details: { changed: string[] } } };
    expect(refusal.error).toMatchObject({ code: "SPEC_CONFLICT", details: { changed: ["partitions"] } });
    expect(refusal.error.message).toContain("lowering the count is not built yet");

    const again = await call("PUT", `/v1/dataflows/${id}`, { ...minimal, partitions: 4, replication: 2 });
    expect(again.status).toBe(200);
    expect(((await again.json()) as { status: string }).status).toBe("unchanged");

    const list = (await (await call("GET", "/v1/dataflows")).json()) as { dataflows: { id: string }[] };
    expect(list.dataflows.map((d) => d.id)).toContain(id);
    const one = (await (await call("GET", `/v1/dataflows/${id}`)).json()) as { dataflow: { id: string; ready: boolean } };
    expect(one.dataflow).toMatchObject({ id, ready: true });
  });

  it("shows every replica's role, epoch and LSNs in the status", async () => {
    const id = uniqueName("df");
    expect((await call("PUT", `/v1/dataflows/${id}`, clicksSpec(uniqueName("s"), { partitions: 2 }))).status).toBe(201);
    const status = (await (await call("GET", "/v1/status")).json()) as {
      dataflows: { id: string; partitions: { epoch: number; status: string; replicas: { role: string; epoch: number; lsn: number }[] }[] }[];
    };
    const mine = status.dataflows.find((d) => d.id === id);
    expect(mine?.partitions.map((p) => p.replicas.map((r) => [r.role, r.epoch, r.lsn]))).toEqual([
      [["primary", 1, 0], ["standby", 1, 0]],
      [["primary", 1, 0], ["standby", 1, 0]],
    ]);
  });
});
