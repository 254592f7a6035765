/** `DELETE /v1/dataflows/{id}` (issue 6): the dataflow and its replicas' state go; the id can be reused, fenced above the old epochs. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, clicksSpec, createDataflow, postEvents, results } from "../helpers/api.ts";

describe("deleting a dataflow", () => {
  it("removes it and its replicas' state, and lets the id be created again above the old epochs", async () => {
    const { id, stream } = await createDataflow({ partitions: 2 });
    expect((await postEvents(stream, "p", 1, [{ page: "a", ts: 1, bytes: 1 }])).status).toBe(200);
    const before = (await (await call("GET", `/v1/dataflows/${id}`)).json()) as { dataflow: { partitions: { primary: string; standby: string }[] } };
    const names = before.dataflow.partitions.flatMap((p) => [p.primary, p.standby]);

    const deleted = await call("DELETE", `/v1/dataflows/${id}`);
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ dataflow: id, status: "deleted", pending: [] });
    for (const name of names) expect(await env.PARTITION_REPLICA.getByName(name).status()).toBeNull();
    expect((await call("GET", `/v1/dataflows/${id}`)).status).toBe(404);
    expect((await call("GET", `/v1/dataflows/${id}/results`)).status).toBe(404);
    expect((await postEvents(stream, "p", 2, [{ page: "a", ts: 1, bytes: 1 }])).status).toBe(404);
    expect((await call("DELETE", `/v1/dataflows/${id}`)).status).toBe(404);

    // Same id, another spec: a fresh dataflow whose epochs are above the deleted one's.
    const again = await call("PUT", `/v1/dataflows/${id}`, clicksSpec(stream, { partitions: 2, aggregates: { n: { op: "count" } } }));
    expect(again.status).toBe(201);
    const body = (await again.json()) as { dataflow: { partitions: { epoch: number }[] } };
    expect(body.dataflow.partitions.every((p) => p.epoch === 2)).toBe(true);
    expect(await results(id)).toEqual([]);
    expect((await postEvents(stream, "p", 1, [{ page: "b", ts: 1, bytes: 1 }])).status).toBe(200);
    expect((await results(id)).map((r) => [r.key, r.values.n])).toEqual([["b", 1]]);
  });
});
