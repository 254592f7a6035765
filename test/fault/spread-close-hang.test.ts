/**
 * A spread close (issue 12, `shared/closing/`) under an injected hang of the primary: its
 * own close steps go through the object's fault gate like its calls, so while it hangs no
 * close entry is logged or forwarded, and once healed the next probe starts the close again.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CLOSE_KEYS_PER_STEP } from "../../shared/closing/close-entry.ts";
import { DataflowSpecSchema } from "../../shared/wire/dataflow-spec.ts";
import { clicksSpec, uniqueName } from "../helpers/api.ts";

const spec = DataflowSpecSchema.parse(clicksSpec("s", { partitions: 1, replication: 2 }));

/** What a replica's outputs table holds, in output order. */
async function storedOutputs(name: string): Promise<string[]> {
  return runInDurableObject(env.PARTITION_REPLICA.getByName(name), (_instance, state) =>
    state.storage.sql.exec<{ body: string }>("SELECT body FROM outputs ORDER BY output_seq").toArray().map((row) => row.body),
  );
}

describe("a spread close and an injected hang", () => {
  it("stops while the primary hangs (an injected fault), and goes on once it is healed", async () => {
    const primaryName = uniqueName("close-primary");
    const standbyName = uniqueName("close-standby");
    const base = { dataflowId: uniqueName("df"), partition: 0, spec, epoch: 1, version: 1, create: true } as const;
    const primary = env.PARTITION_REPLICA.getByName(primaryName);
    const standby = env.PARTITION_REPLICA.getByName(standbyName);
    expect(await standby.init({ ...base, name: standbyName, role: "standby", hasStandby: false, standby: null })).toEqual({ status: "ok" });
    expect(await primary.init({ ...base, name: primaryName, role: "primary", hasStandby: true, standby: standbyName })).toEqual({ status: "ok" });
    const many = CLOSE_KEYS_PER_STEP * 8 + 123;
    const fill = JSON.stringify(Array.from({ length: many }, (_, i) => [`k${i}`, 1_000, 1]));
    const reply = await primary.write({ epoch: 1, batches: [{ producer: "p", seq: 1, records: fill }, { producer: "p", seq: 2, records: JSON.stringify([["k0", 20_000, 1]]) }] });
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
