/** Post then query in workerd: exact aggregates, closed windows, resends, NDJSON, R=1, several dataflows per stream. */
import { describe, expect, it } from "vitest";
import { call, createDataflow, postEvents, results } from "../helpers/api.ts";

describe("ingest then query", () => {
  it("gives exact per-key window aggregates merged across partitions", async () => {
    const { id, stream } = await createDataflow({ window: { kind: "tumbling", sizeMs: 10_000, allowedLatenessMs: 60_000 } });
    const res = await postEvents(stream, "p1", 1, [
      { page: "home", ts: 1_000, bytes: 10 },
      { page: "home", ts: 9_999, bytes: 30 },
      { page: "home", ts: 10_000, bytes: 5 },
      { page: "cart", ts: 2_000, bytes: -4 },
      { page: 42, ts: "1970-01-01T00:00:03Z", bytes: 1.5 },
    ]);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { duplicate: boolean; events: number; dataflows: { partitions: { replicated: boolean }[] }[] };
    expect(body.duplicate).toBe(false);
    expect(body.events).toBe(5);
    expect(body.dataflows[0]?.partitions.every((p) => p.replicated)).toBe(true);

    expect(await results(id)).toEqual([
      { key: "42", windowStartMs: 0, windowEndMs: 10_000, values: { n: 1, bytes: 1.5, lo: 1.5, hi: 1.5, mean: 1.5 }, closed: false },
      { key: "cart", windowStartMs: 0, windowEndMs: 10_000, values: { n: 1, bytes: -4, lo: -4, hi: -4, mean: -4 }, closed: false },
      { key: "home", windowStartMs: 0, windowEndMs: 10_000, values: { n: 2, bytes: 40, lo: 10, hi: 30, mean: 20 }, closed: false },
      { key: "home", windowStartMs: 10_000, windowEndMs: 20_000, values: { n: 1, bytes: 5, lo: 5, hi: 5, mean: 5 }, closed: false },
    ]);
    expect(await results(id, "?key=home&from=10000&to=20000")).toEqual([
      { key: "home", windowStartMs: 10_000, windowEndMs: 20_000, values: { n: 1, bytes: 5, lo: 5, hi: 5, mean: 5 }, closed: false },
    ]);
  });

  it("closes windows once event time passes their end and keeps them queryable", async () => {
    const { id, stream } = await createDataflow({ partitions: 1 });
    expect((await postEvents(stream, "p1", 1, [{ page: "a", ts: 500, bytes: 1 }, { page: "b", ts: 600, bytes: 2 }])).status).toBe(200);
    expect((await postEvents(stream, "p1", 2, [{ page: "a", ts: 25_000, bytes: 3 }])).status).toBe(200);
    const all = await results(id);
    expect(all.map((r) => [r.key, r.windowStartMs, r.closed, r.values.n])).toEqual([
      ["a", 0, true, 1],
      ["b", 0, true, 1],
      ["a", 20_000, false, 1],
    ]);
    const late = await postEvents(stream, "p1", 3, [{ page: "a", ts: 100, bytes: 9 }]);
    expect(late.status).toBe(200);
    expect(await results(id, "?key=a&to=10000")).toEqual([all[0]]);
    const status = (await (await call("GET", "/v1/status")).json()) as { dataflows: { id: string; partitions: { replicas: { lateRecords: number }[] }[] }[] };
    const mine = status.dataflows.find((d) => d.id === id);
    expect(mine?.partitions[0]?.replicas.map((r) => r.lateRecords)).toEqual([1, 1]);
  });

  it("pages through results with limit and the next cursor, across partitions", async () => {
    const { id, stream } = await createDataflow({ window: { kind: "tumbling", sizeMs: 10_000, allowedLatenessMs: 600_000 } });
    const events = ["a", "b", "c", "d", "e", "f", "g"].flatMap((page, i) => [{ page, ts: i * 10_000, bytes: 1 }, { page, ts: 5_000, bytes: 2 }]);
    expect((await postEvents(stream, "p1", 1, events)).status).toBe(200);
    const everything = await results(id);
    expect(everything).toHaveLength(13);
    const paged: unknown[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 20; page++) {
      const query: string = `?limit=3${cursor ? `&after=${encodeURIComponent(cursor)}` : ""}`;
      const body = (await (await call("GET", `/v1/dataflows/${id}/results${query}`)).json()) as { results: unknown[]; next: string | null };
      expect(body.results.length).toBeLessThanOrEqual(3);
      paged.push(...body.results);
      cursor = body.next;
      if (!cursor) break;
    }
    expect(paged).toEqual(everything);
    expect((await call("GET", `/v1/dataflows/${id}/results?limit=0`)).status).toBe(400);
    expect((await call("GET", `/v1/dataflows/${id}/results?after=nonsense`)).status).toBe(400);
  });

  it("counts a resent batch once and marks the resend duplicate", async () => {
    const { id, stream } = await createDataflow();
    const events = [{ page: "a", ts: 1, bytes: 1 }, { page: "b", ts: 2, bytes: 2 }, { page: "c", ts: 3, bytes: 3 }];
    const first = await postEvents(stream, "p1", 7, events);
    const again = await postEvents(stream, "p1", 7, events);
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(((await first.json()) as { duplicate: boolean }).duplicate).toBe(false);
    expect(((await again.json()) as { duplicate: boolean }).duplicate).toBe(true);
    const concurrent = await Promise.all([1, 2, 3].map(() => postEvents(stream, "p2", 1, events)));
    expect(concurrent.map((r) => r.status)).toEqual([200, 200, 200]);
    expect((await results(id)).map((r) => [r.key, r.values.n])).toEqual([["a", 2], ["b", 2], ["c", 2]]);
  });

  it("accepts NDJSON and out-of-order seqs from one producer", async () => {
    const { id, stream } = await createDataflow();
    const ndjson = (page: string) => `{"page":"${page}","ts":5,"bytes":1}\n\n{"page":"${page}","ts":6,"bytes":2}\n`;
    const posts = await Promise.all([3, 1, 2].map((seq) => postEvents(stream, "p1", seq, ndjson(`s${seq}`), { "content-type": "application/x-ndjson" })));
    expect(posts.map((r) => r.status)).toEqual([200, 200, 200]);
    expect((await results(id)).map((r) => [r.key, r.values.n, r.values.bytes])).toEqual([["s1", 2, 3], ["s2", 2, 3], ["s3", 2, 3]]);
  });

  it("aggregates over sliding windows", async () => {
    const { id, stream } = await createDataflow({ partitions: 2, window: { kind: "sliding", sizeMs: 10_000, slideMs: 5_000, allowedLatenessMs: 60_000 } });
    expect((await postEvents(stream, "p1", 1, [{ page: "a", ts: 7_000, bytes: 1 }, { page: "a", ts: 12_000, bytes: 2 }])).status).toBe(200);
    expect((await results(id)).map((r) => [r.windowStartMs, r.windowEndMs, r.values.n, r.values.bytes])).toEqual([
      [0, 10_000, 1, 1],
      [5_000, 15_000, 2, 3],
      [10_000, 20_000, 1, 2],
    ]);
  });

  it("counts only events passing the dataflow's filter", async () => {
    const { id, stream } = await createDataflow({ filter: { and: [{ field: "bytes", op: "ge", value: 10 }, { not: { field: "page", op: "in", values: ["admin"] } }] } });
    const res = await postEvents(stream, "p1", 1, [
      { page: "a", ts: 1, bytes: 10 },
      { page: "a", ts: 2, bytes: 9 },
      { page: "admin", ts: 3, bytes: 50 },
      { page: "b", ts: 4, bytes: 11 },
    ]);
    expect(res.status).toBe(200);
    expect((await results(id)).map((r) => [r.key, r.values.n, r.values.bytes])).toEqual([["a", 1, 10], ["b", 1, 11]]);
  });

  it("runs unreplicated dataflows (R=1) and says so", async () => {
    const { id, stream } = await createDataflow({ replication: 1, partitions: 2 });
    const res = await postEvents(stream, "p1", 1, [{ page: "x", ts: 1, bytes: 4 }]);
    const body = (await res.json()) as { dataflows: { partitions: { replicated: boolean }[] }[] };
    expect(body.dataflows[0]?.partitions.map((p) => p.replicated)).toEqual([false]);
    expect((await results(id)).map((r) => r.values.bytes)).toEqual([4]);
  });

  it("feeds every dataflow reading the stream", async () => {
    const { id, stream } = await createDataflow();
    const other = `${id}-by-bytes`;
    const put = await call("PUT", `/v1/dataflows/${other}`, {
      stream, key: "page", window: { kind: "tumbling", sizeMs: 3_600_000 }, aggregates: { total: { op: "sum", field: "bytes" } }, partitions: 1,
    });
    expect(put.status).toBe(201);
    expect((await postEvents(stream, "p1", 1, [{ page: "a", ts: 1, bytes: 4 }])).status).toBe(200);
    expect((await results(id)).map((r) => r.values.n)).toEqual([1]);
    expect((await results(other)).map((r) => r.values.total)).toEqual([4]);
  });
});
