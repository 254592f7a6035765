/** A subscriber that reconnects with its cursor across a primary fail-over gets every closed window exactly once (issue 6). */
import { describe, expect, it } from "vitest";
import { subscribe } from "../helpers/api.ts";
import { failOverWhilePosting, outputLabel, SUBSCRIBED_PAGES, subscribedDataflow } from "../helpers/fault-client.ts";

describe("subscription across a fail-over", () => {
  it("resumes on the new primary with no gap and no repeat", async () => {
    const { id, post } = await subscribedDataflow();
    const before = await subscribe(id, 200);
    expect(before.length).toBe(SUBSCRIBED_PAGES.length * 2);
    await failOverWhilePosting(id, post);

    const after = await subscribe(id, 200, before.at(-1)?.id);
    const seen = [...before, ...after].map((e) => outputLabel(e.data));
    expect(new Set(seen).size).toBe(seen.length);
    const everything = (await subscribe(id, 200)).map((e) => outputLabel(e.data));
    expect(seen.sort()).toEqual(everything.sort());
    expect(everything).toHaveLength(SUBSCRIBED_PAGES.length * 5);
  });
});
