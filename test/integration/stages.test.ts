/**
 * Stages in workerd (issue 27): a dataflow reading another's closed results, through the
 * real Worker and replicas: results flow, watermarks close downstream windows without new
 * input at the source, a stage created late reads from the first result, the status shows
 * the pipeline and its edges, and deleting an upstream that stages read is refused.
 */
import { describe, expect, it } from "vitest";
import { call, postEvents, results, uniqueName } from "../helpers/api.ts";
import { waitFor } from "../helpers/wait.ts";

/** Clicks per page per second (the first stage). */
function pagesSpec(stream: string, overrides: Record<string, unknown> = {}) {
  return { stream, key: "page", timeField: "ts", window: { kind: "tumbling", sizeMs: 1_000 }, aggregates: { n: { op: "count" }, bytes: { op: "sum", field: "bytes" } }, partitions: 2, ...overrides };
}

/** Per site, the sum of its pages' counts per 2 s (the second stage). */
function sitesSpec(from: string | string[], overrides: Record<string, unknown> = {}) {
  return { from, key: "values.site", window: { kind: "tumbling", sizeMs: 2_000 }, aggregates: { views: { op: "sum", field: "values.n" }, pages: { op: "count" } }, partitions: 3, ...overrides };
}

const T0 = 1_700_000_000_000;

describe("stages", () => {
  it("a stage reads the closed results of its upstream, and closes its own windows on the upstream's watermark", { timeout: 20_000 }, async () => {
    const stream = uniqueName("clicks");
    const up = uniqueName("pages");
    const down = uniqueName("sites");
    expect((await call("PUT", `/v1/dataflows/${up}`, pagesSpec(stream, { key: ["site", "page"], aggregates: { n: { op: "count" }, site: { op: "max", field: "siteNo" } }, window: { kind: "tumbling", sizeMs: 1_000, allowedLatenessMs: 1_000 } }))).status).toBe(201);
    const created = await call("PUT", `/v1/dataflows/${down}`, sitesSpec(up, { key: "values.site" }));
    expect(created.status, await created.clone().text()).toBe(201);
    const body = (await created.json()) as { starts: unknown; warnings: string[] };
    expect(body.starts).toEqual([{ dataflow: up, resultsSoFar: 0 }]);
    expect(body.warnings).toEqual([
      `dataflow '${up}' has no idleAdvanceMs: this stage's windows close only once every partition of '${up}' has seen events past them (set idleAdvanceMs on '${up}' so idle partitions move on; docs/PIPELINES.md)`,
    ]);

    const events = [
      { site: "a", siteNo: 1, page: "/x", ts: T0 + 100 },
      { site: "a", siteNo: 1, page: "/x", ts: T0 + 200 },
      { site: "a", siteNo: 1, page: "/y", ts: T0 + 1_100 },
      { site: "b", siteNo: 2, page: "/x", ts: T0 + 300 },
    ];
    expect((await postEvents(stream, "p", 1, events)).status).toBe(200);
    // Time passes at the source: every upstream partition sees an event 3 s later.
    const later = [0, 1, 2, 3, 4, 5].map((i) => ({ site: "z", siteNo: 9, page: `/late${i}`, ts: T0 + 4_500 }));
    expect((await postEvents(stream, "p", 2, later)).status).toBe(200);
    const closed = await waitFor(async () => {
      const got = (await results(down)).filter((r) => r.closed && r.windowStartMs < T0 + 4_000);
      return got.length === 2 ? got : null;
    }, 10_000, "two closed results in the stage");
    expect(closed.map((r) => [r.key, r.windowStartMs - T0, r.values.views, r.values.pages])).toEqual([
      ["1", 0, 3, 2],
      ["2", 0, 1, 1],
    ]);
  });
});

/** Posts the events of second `second` (one per page) for pages a..d. */
function secondOf(second: number, pages = ["a", "b", "c", "d"]) {
  return pages.map((page, i) => ({ site: i % 2 === 0 ? "even" : "odd", siteNo: i % 2, page, ts: T0 + second * 1_000 + 10 + i, bytes: 100 + i }));
}

async function createOk(id: string, spec: unknown): Promise<{ starts: { dataflow: string; resultsSoFar: number | null }[]; warnings: string[] }> {
  const res = await call("PUT", `/v1/dataflows/${id}`, spec);
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { starts: { dataflow: string; resultsSoFar: number | null }[]; warnings: string[] };
}

describe("stages: life cycle and checks", () => {
  it("refuses to delete a dataflow that stages read, naming them, and deletes it once they are gone", async () => {
    const stream = uniqueName("clicks");
    const up = uniqueName("pages");
    const down = uniqueName("sites");
    await createOk(up, pagesSpec(stream));
    await createOk(down, sitesSpec(up, { key: "key" }));
    const refused = await call("DELETE", `/v1/dataflows/${up}`);
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: unknown }).error).toEqual({
      code: "DATAFLOW_IN_USE",
      message: `dataflow '${up}' is read by '${down}': delete that stage first`,
      details: { readers: [down] },
    });
    const shown = (await (await call("GET", `/v1/dataflows/${up}`)).json()) as { dataflow: { readers: string[] } };
    expect(shown.dataflow.readers).toEqual([down]);
    expect((await call("DELETE", `/v1/dataflows/${down}`)).status).toBe(200);
    const after = (await (await call("GET", `/v1/dataflows/${up}`)).json()) as { dataflow: { readers: string[] } };
    expect(after.dataflow.readers).toEqual([]);
    expect((await call("DELETE", `/v1/dataflows/${up}`)).status).toBe(200);
  });

  it("refuses a stage naming an unknown dataflow, itself, or a field its upstream's results do not carry, with a 400 naming each", async () => {
    const stream = uniqueName("clicks");
    const up = uniqueName("pages");
    await createOk(up, pagesSpec(stream));
    const problems = async (id: string, spec: unknown) => {
      const res = await call("PUT", `/v1/dataflows/${id}`, spec);
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { code: string; message: string; details: { issues: { path: (string | number)[]; message: string }[] } } };
      expect(body.error.code).toBe("INVALID_REQUEST");
      return body.error.details.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    };
    expect(await problems(uniqueName("s"), sitesSpec("nope", { key: "key" }))).toEqual(["from: no dataflow 'nope': create the upstream first"]);
    const self = uniqueName("s");
    expect(await problems(self, sitesSpec(self, { key: "key" }))).toEqual(["from: a dataflow cannot read its own results"]);
    expect(await problems(uniqueName("s"), sitesSpec(up, { key: "key", aggregates: { x: { op: "sum", field: "values.nope" } } }))).toEqual([
      `aggregates.x.field: the results of dataflow '${up}' carry no field 'values.nope' (they carry key, windowStartMs, windowEndMs, group.page, values.n, values.bytes)`,
    ]);
    // A stage takes no clock ticks of its own: its clock is its upstreams' progress.
    const ticking = await call("PUT", `/v1/dataflows/${uniqueName("s")}`, sitesSpec(up, { key: "key", idleAdvanceMs: 0 }));
    expect(ticking.status).toBe(400);
    expect(await ticking.text()).toContain("set idleAdvanceMs on the first stage");
    const both = await call("PUT", `/v1/dataflows/${uniqueName("s")}`, { ...sitesSpec(up, { key: "key" }), stream });
    expect(both.status).toBe(400);
    expect(await both.text()).toContain("a dataflow reads a stream or other dataflows' results (from), not both");
  });

  it("starts a stage created late from the upstream's first result, and says how many came before", { timeout: 20_000 }, async () => {
    const stream = uniqueName("clicks");
    const up = uniqueName("pages");
    const down = uniqueName("sites");
    await createOk(up, pagesSpec(stream, { partitions: 1, idleAdvanceMs: 60_000 }));
    for (let second = 0; second < 4; second++) expect((await postEvents(stream, "p", second + 1, secondOf(second))).status).toBe(200);
    const upClosed = (await results(up)).filter((r) => r.closed).length;
    expect(upClosed).toBe(12);
    const created = await createOk(down, sitesSpec(up, { key: "key", partitions: 2 }));
    expect(created.starts).toEqual([{ dataflow: up, resultsSoFar: 12 }]);
    expect(created.warnings, "its upstream has clock ticks").toEqual([]);
    const closed = await waitFor(async () => {
      const got = (await results(down)).filter((r) => r.closed);
      return got.length === 4 ? got : null;
    }, 10_000, "the stage's closed windows of seconds 0..1");
    expect(closed.map((r) => [r.key, r.windowStartMs - T0, r.values.views])).toEqual([
      ["a", 0, 2],
      ["b", 0, 2],
      ["c", 0, 2],
      ["d", 0, 2],
    ]);
  });

  it("shows the pipeline and every edge caught up in the status", { timeout: 20_000 }, async () => {
    const stream = uniqueName("clicks");
    const up = uniqueName("pages");
    const down = uniqueName("sites");
    await createOk(up, pagesSpec(stream));
    await createOk(down, sitesSpec(up, { key: "key", partitions: 2 }));
    for (let second = 0; second < 3; second++) expect((await postEvents(stream, "p", second + 1, secondOf(second))).status).toBe(200);
    type Status = { pipeline: { nodes: { id: string; kind: string }[]; edges: { from: string; to: string }[] }; dataflows: { id: string; readers: string[]; edges: { upstream: string; upstreamPartition: number; partition: number; produced: number; delivered: number; acknowledged: number; lag: number }[] }[] };
    const status = await waitFor(async () => {
      const body = (await (await call("GET", "/v1/status")).json()) as Status;
      const edges = body.dataflows.find((d) => d.id === down)?.edges ?? [];
      return edges.length === 4 && edges.every((e) => e.lag === 0 && e.produced > 0) ? body : null;
    }, 10_000, "every edge caught up");
    expect(status.pipeline.edges).toEqual(expect.arrayContaining([{ from: `stream:${stream}`, to: up }, { from: up, to: down }]));
    expect(status.pipeline.nodes).toEqual(expect.arrayContaining([{ id: `stream:${stream}`, kind: "stream" }, { id: down, kind: "dataflow" }]));
    expect(status.dataflows.find((d) => d.id === up)?.readers).toEqual([down]);
    const edges = status.dataflows.find((d) => d.id === down)?.edges ?? [];
    expect(edges.map((e) => [e.upstream, e.upstreamPartition, e.partition])).toEqual([
      [up, 0, 0],
      [up, 0, 1],
      [up, 1, 0],
      [up, 1, 1],
    ]);
    for (const e of edges) expect(e.acknowledged).toBe(e.produced);
    const summary = (await (await call("GET", "/v1/status?view=summary")).json()) as { pipeline: string[]; dataflows: { id: string; edges: string[] }[] };
    expect(summary.pipeline).toContain(`${up} → ${down}`);
    expect(summary.dataflows.find((d) => d.id === down)?.edges[0]).toMatch(new RegExp(`^${up}/p0 → p0: produced \\d+, delivered \\d+, acknowledged \\d+, lag 0$`));
  });

  it("runs three stages, a fan-out and a windowed join", { timeout: 30_000 }, async () => {
    const stream = uniqueName("clicks");
    const pages = uniqueName("pages");
    const sites = uniqueName("sites");
    const perSite = uniqueName("persite");
    const joined = uniqueName("joined");
    // One partition: without clock ticks (the monitor's alarm never fires here) a partition without events holds every stage back.
    await createOk(pages, pagesSpec(stream, { partitions: 1, key: ["site", "page"], aggregates: { n: { op: "count" }, bytes: { op: "sum", field: "bytes" } } }));
    // Fan-out: two stages read pages; a third reads one of them; a join reads pages and that third one.
    await createOk(sites, { from: pages, key: "values.n", window: { kind: "tumbling", sizeMs: 2_000 }, aggregates: { keys: { op: "count" } }, partitions: 2 });
    const bySite = await createOk(perSite, { from: pages, key: "key", window: { kind: "tumbling", sizeMs: 2_000 }, aggregates: { n: { op: "sum", field: "values.n" }, bytes: { op: "sum", field: "values.bytes" } }, partitions: 2 });
    expect(bySite.starts).toEqual([{ dataflow: pages, resultsSoFar: 0 }]);
    await createOk(joined, {
      from: [pages, perSite],
      key: "key",
      window: { kind: "tumbling", sizeMs: 4_000 },
      join: { kind: "inner", left: { clicks: { op: "sum", field: "values.n" } }, right: { total: { op: "max", field: "values.bytes" } } },
      partitions: 2,
    });
    for (let second = 0; second < 6; second++) expect((await postEvents(stream, "p", second + 1, secondOf(second))).status).toBe(200);
    const windows = await waitFor(async () => {
      const got = (await results(joined)).filter((r) => r.closed);
      return got.length === 4 ? got : null;
    }, 20_000, "the join's first window closed");
    // Per page over [0, 4 s): 4 clicks; the largest 2-s byte sum of its page is 2 events × its bytes. Keys are `["site","page"]`.
    expect(windows.map((r) => [JSON.parse(r.key)[1], r.windowStartMs - T0, r.values])).toEqual([
      ["a", 0, { clicks: 4, total: 200 }],
      ["c", 0, { clicks: 4, total: 204 }],
      ["b", 0, { clicks: 4, total: 202 }],
      ["d", 0, { clicks: 4, total: 206 }],
    ]);
    const siteCounts = (await results(sites)).filter((r) => r.closed && r.windowStartMs === T0);
    expect(siteCounts.map((r) => [r.key, r.values.keys])).toEqual([["1", 8]]);
  });
});
