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
    expect(((await created.json()) as { starts: unknown }).starts).toEqual([{ dataflow: up, resultsSoFar: 0 }]);

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
