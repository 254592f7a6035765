/** Live subscription over Server-Sent Events (issue 6): closed windows from a cursor, none missed or repeated. */
import { describe, expect, it } from "vitest";
import { call, createDataflow, postEvents, subscribe } from "../helpers/api.ts";

describe("subscribing to closed windows", () => {
  it("streams every closed window once, and resumes from a cursor without gaps or repeats", async () => {
    const { id, stream } = await createDataflow({ partitions: 3, window: { kind: "tumbling", sizeMs: 1_000 } });
    const pages = ["a", "b", "c", "d", "e", "f"];
    // Windows [0,1s) .. [3s,4s) for every page; the last batch's events close the earlier ones.
    for (let second = 0; second < 5; second++) {
      expect((await postEvents(stream, "p", second + 1, pages.map((page) => ({ page, ts: second * 1_000 + 10, bytes: second })))).status).toBe(200);
    }
    const all = await subscribe(id, 300);
    expect(all).toHaveLength(pages.length * 4);
    const perPartition = new Map<number, number[]>();
    for (const e of all) perPartition.set(e.data.partition, [...(perPartition.get(e.data.partition) ?? []), e.data.outputSeq]);
    for (const seqs of perPartition.values()) expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(new Set(all.map((e) => `${e.data.key}@${e.data.windowStartMs}`)).size).toBe(all.length);

    const cut = all[7];
    const rest = await subscribe(id, 300, cut?.id);
    const resumed = [...all.slice(0, 8), ...rest].map((e) => `${e.data.partition}:${e.data.outputSeq}`).sort();
    expect(resumed).toEqual(all.map((e) => `${e.data.partition}:${e.data.outputSeq}`).sort());
    expect(rest.length).toBeGreaterThan(0);
  });

  it("refuses a malformed cursor or one for another number of partitions", async () => {
    const { id } = await createDataflow({ partitions: 2 });
    expect((await call("GET", `/v1/dataflows/${id}/subscribe?cursor=1,2,3&maxMs=10`)).status).toBe(400);
    expect((await call("GET", `/v1/dataflows/${id}/subscribe?cursor=x&maxMs=10`)).status).toBe(400);
    expect((await call("GET", "/v1/dataflows/nope/subscribe?maxMs=10")).status).toBe(404);
  });
});
