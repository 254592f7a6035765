/**
 * A close of a window larger than one step's limit (issue 12, `shared/closing/`), through
 * the real Durable Objects: after the write that passes the window's end, the primary logs
 * close entries itself (run on a timer, so calls that came in meanwhile go first) until
 * both replicas have numbered every result, the same ones in the same order.
 */
import { describe, expect, it } from "vitest";
import { CLOSE_KEYS_PER_STEP } from "../../shared/closing/close-entry.ts";
import { closePair, fillAndCloser, storedOutputs } from "../helpers/close-pair.ts";

const KEYS = CLOSE_KEYS_PER_STEP * 2 + 123;

describe("a window of more keys than one close step", () => {
  it("closes over several steps on both replicas without further writes, numbering the same outputs", async () => {
    const { primary, standby, primaryName, standbyName } = await closePair();
    const { fill, closer } = fillAndCloser(KEYS);
    const reply = await primary.write({ epoch: 1, batches: [{ producer: "p", seq: 1, records: fill }, { producer: "p", seq: 2, records: closer }] });
    expect(reply.status).toBe("ok");
    const deadline = Date.now() + 20_000;
    while ((await primary.status())?.outputSeq !== KEYS || (await standby.status())?.outputSeq !== KEYS) {
      if (Date.now() > deadline) throw new Error("the close did not finish within 20 s");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const outputs = await storedOutputs(primaryName);
    expect(outputs).toHaveLength(KEYS);
    expect(await storedOutputs(standbyName)).toEqual(outputs);
    const keys = outputs.map((body) => (JSON.parse(body) as { key: string }).key);
    expect(keys).toEqual(Array.from({ length: KEYS }, (_, i) => `k${i}`).sort());
    // Two close entries after the write's two entries, and nothing else.
    expect((await primary.status())?.lsn).toBe(4);
  });
});
