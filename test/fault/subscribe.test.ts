/** A subscriber that reconnects with its cursor across a primary fail-over gets every closed window exactly once (issue 6). */
import { describe, expect, it } from "vitest";
import { createDataflow, subscribe } from "../helpers/api.ts";
import { fault, postUntilAcked, routing, tick, tickUntilHealthy } from "../helpers/fault-client.ts";

describe("subscription across a fail-over", () => {
  it("resumes on the new primary with no gap and no repeat", async () => {
    const { id, stream } = await createDataflow({ partitions: 2, window: { kind: "tumbling", sizeMs: 1_000 } });
    const pages = ["a", "b", "c", "d"];
    const post = (second: number) => postUntilAcked(stream, "p", second + 1, pages.map((page) => ({ page, ts: second * 1_000 + 5, bytes: 1 })));
    for (let second = 0; second < 3; second++) await post(second);
    const before = await subscribe(id, 200);
    expect(before.length).toBe(pages.length * 2);

    const oldPrimary = (await routing(id))[0]?.primary ?? "";
    expect((await fault(oldPrimary, "crash")).status).toBe(200);
    for (let second = 3; second < 6; second++) await post(second);
    await tick();
    await tickUntilHealthy(id);
    expect((await routing(id))[0]?.primary).not.toBe(oldPrimary);

    const after = await subscribe(id, 200, before.at(-1)?.id);
    const seen = [...before, ...after].map((e) => `${e.data.partition}:${e.data.outputSeq}:${e.data.key}@${e.data.windowStartMs}`);
    expect(new Set(seen).size).toBe(seen.length);
    const everything = (await subscribe(id, 200)).map((e) => `${e.data.partition}:${e.data.outputSeq}:${e.data.key}@${e.data.windowStartMs}`);
    expect(seen.sort()).toEqual(everything.sort());
    expect(everything).toHaveLength(pages.length * 5);
  });
});
