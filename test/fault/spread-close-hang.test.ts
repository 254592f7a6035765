/**
 * A spread close (issue 12, `shared/closing/`) under an injected hang of the primary: its
 * own close steps go through the object's fault gate like its calls, so while it hangs no
 * close entry is logged or forwarded, and once healed the next probe starts the close again.
 */
import { describe, expect, it } from "vitest";
import { CLOSE_KEYS_PER_STEP } from "../../shared/closing/close-entry.ts";
import { closePair, fillAndCloser, storedOutputs } from "../helpers/close-pair.ts";

describe("a spread close and an injected hang", () => {
  it("stops while the primary hangs (an injected fault), and goes on once it is healed", async () => {
    const { primary, standby, primaryName, standbyName } = await closePair();
    const many = CLOSE_KEYS_PER_STEP * 8 + 123;
    const { fill, closer } = fillAndCloser(many);
    const reply = await primary.write({ epoch: 1, batches: [{ producer: "p", seq: 1, records: fill }, { producer: "p", seq: 2, records: closer }] });
    expect(reply.status).toBe("ok");
    expect(await primary.injectFault("hang")).toMatchObject({ status: "ok", fault: "hang" });
    const lsn = async () => (await standby.status())?.lsn ?? 0;
    const pause = () => new Promise((resolve) => setTimeout(resolve, 400));
    // A step already past the gate may still land; after that, nothing while it hangs.
    await pause();
    const hung = await lsn();
    await pause();
    expect(await lsn()).toBe(hung);
    expect((await standby.status())?.outputSeq).toBeLessThan(many);
    expect(await primary.injectFault("heal")).toMatchObject({ status: "ok", fault: null });
    // The next probe (or step) starts the close again.
    const deadline = Date.now() + 30_000;
    while ((await primary.status())?.outputSeq !== many || (await standby.status())?.outputSeq !== many) {
      if (Date.now() > deadline) throw new Error("the close did not finish within 30 s of the heal");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(await storedOutputs(standbyName)).toEqual(await storedOutputs(primaryName));
  });
});
