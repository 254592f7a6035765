/**
 * Results paging in workerd: `next` is null on the last page, also when that page is exactly
 * full (before, a page that filled its limit always pointed at a next page, which was empty),
 * for open and closed results, one key or all keys, one partition or several merged.
 */
import { describe, expect, it } from "vitest";
import { call, createDataflow, postEvents, results } from "../helpers/api.ts";

type Page = { results: { key: string; windowStartMs: number }[]; next: string | null };

/** Every page of `query` at `limit` per page, following `next` until it is null. */
async function pages(id: string, query: string, limit: number): Promise<Page[]> {
  const all: Page[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 50; i++) {
    const after: string = cursor === null ? "" : `&after=${encodeURIComponent(cursor)}`;
    const res = await call("GET", `/v1/dataflows/${id}/results?limit=${limit}${query}${after}`);
    expect(res.status).toBe(200);
    const page = (await res.json()) as Page;
    all.push(page);
    cursor = page.next;
    if (cursor === null) return all;
  }
  throw new Error("paging did not end");
}

/** Pages `query` at `limit`: each page full but the last, none empty, together every result. */
async function expectPaging(id: string, query: string, limit: number, everything: readonly unknown[]): Promise<void> {
  const got = await pages(id, query, limit);
  expect(got.map((p) => p.results.length)).toEqual(Array.from({ length: Math.ceil(everything.length / limit) }, (_, i) => Math.min(limit, everything.length - i * limit)));
  expect(got.flatMap((p) => p.results)).toEqual(everything);
}

describe("results paging", () => {
  it("answers next null on an exactly full last page of one key's open windows", async () => {
    const { id, stream } = await createDataflow({ window: { kind: "tumbling", sizeMs: 10_000, allowedLatenessMs: 600_000 } });
    expect((await postEvents(stream, "p1", 1, [{ page: "a:b", ts: 1_000, bytes: 1 }, { page: "a:b", ts: 11_000, bytes: 2 }, { page: "c", ts: 1_000, bytes: 3 }])).status).toBe(200);
    const res = await call("GET", `/v1/dataflows/${id}/results?key=${encodeURIComponent("a:b")}&limit=2`);
    const body = (await res.json()) as Page;
    expect(body.results.map((r) => [r.key, r.windowStartMs])).toEqual([["a:b", 0], ["a:b", 10_000]]);
    expect(body.next).toBeNull();
    // One short of the key's windows still points on, in the unchanged cursor format.
    const first = (await (await call("GET", `/v1/dataflows/${id}/results?key=${encodeURIComponent("a:b")}&limit=1`)).json()) as Page;
    expect(first.next).toBe("0:a:b");
    await expectPaging(id, `&key=${encodeURIComponent("a:b")}`, 1, await results(id, `?key=${encodeURIComponent("a:b")}`));
  }, 20_000);

  it("ends on a full page across keys merged from several partitions", async () => {
    const { id, stream } = await createDataflow({ partitions: 4, window: { kind: "tumbling", sizeMs: 10_000, allowedLatenessMs: 600_000 } });
    const events = ["a", "b", "c", "d", "e", "f"].flatMap((page, i) => [{ page, ts: 1_000, bytes: 1 }, { page, ts: (i % 2) * 10_000 + 2_000, bytes: 2 }]);
    expect((await postEvents(stream, "p1", 1, events)).status).toBe(200);
    const everything = await results(id);
    expect(everything).toHaveLength(9);
    for (const limit of [1, 3, 9, 10, 4]) await expectPaging(id, "", limit, everything);
  }, 20_000);

  it("ends on a full page of closed and open results of one partition", async () => {
    const { id, stream } = await createDataflow({ partitions: 1 });
    expect((await postEvents(stream, "p1", 1, [{ page: "a", ts: 500, bytes: 1 }, { page: "b", ts: 600, bytes: 2 }])).status).toBe(200);
    expect((await postEvents(stream, "p1", 2, [{ page: "a", ts: 25_000, bytes: 3 }])).status).toBe(200);
    const everything = await results(id);
    expect(everything.map((r) => [r.key, r.windowStartMs, r.closed])).toEqual([["a", 0, true], ["b", 0, true], ["a", 20_000, false]]);
    for (const limit of [1, 2, 3]) await expectPaging(id, "", limit, everything);
    // Closed only, and one key across a closed and an open window.
    await expectPaging(id, "&to=10000", 2, everything.slice(0, 2));
    await expectPaging(id, "&key=a", 2, await results(id, "?key=a"));
  }, 20_000);
});
