/**
 * Issue 12 in workerd: a checkpoint of several slices is written over several steps
 * (`shared/replica/checkpoint-steps.ts`). A replica restarted while its rows are only
 * staged comes back from the previous checkpoint plus the log (nothing was trimmed past
 * it), the staged rows are dropped by the next checkpoint, and results stay exact; a
 * restart after a spread checkpoint completed loads exactly the state as of its LSN.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createDataflow } from "../helpers/api.ts";
import { expectExact, fault, faultSpec, postUntilAcked, routing, type Event } from "../helpers/fault-client.ts";

/** 1,000 pages per batch: batches 1..12 add 12,000 keys (three slices), later ones update them. */
const batchOf = (seq: number): Event[] => Array.from({ length: 1_000 }, (_, i) => ({ page: `p${seq <= 12 ? seq : 1 + (seq % 12)}-${i}`, ts: 1_000 + i, bytes: seq }));

/** The stored checkpoint's LSN and how many rows are staged beside it (by a checkpoint not finished). */
async function checkpointRows(name: string): Promise<{ checkpointLsn: number; staged: number }> {
  return runInDurableObject(env.PARTITION_REPLICA.getByName(name), (_instance, state) => {
    const parts = state.storage.sql.exec<{ body: string }>("SELECT body FROM meta_parts").toArray().map((row) => JSON.parse(row.body) as { checkpointLsn?: number });
    const checkpointLsn = parts.find((p) => p.checkpointLsn !== undefined)?.checkpointLsn ?? 0;
    const staged = state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM checkpoint WHERE lsn <> ?", checkpointLsn).one().n;
    return { checkpointLsn, staged };
  });
}

/** Restarts a replica in place: its memory (and any checkpoint in progress) is lost, its storage kept. */
async function restart(name: string): Promise<void> {
  expect((await fault(name, "crash")).status).toBe(200);
  expect((await fault(name, "heal")).status).toBe(200);
}

describe("a checkpoint spread over several steps", () => {
  it("survives restarts while only part of it is staged, with exact results", { timeout: 120_000 }, async () => {
    const { id, stream } = await createDataflow({ ...faultSpec, partitions: 1 });
    const acked: Event[][] = [];
    let seq = 0;
    const post = async () => {
      seq += 1;
      await postUntilAcked(stream, "spreader", seq, batchOf(seq));
      acked.push(batchOf(seq));
    };
    const { primary, standby } = (await routing(id))[0] ?? { primary: "", standby: null };
    for (let i = 0; i < 12; i++) await post();

    // Restart each replica while a checkpoint of it is staged but not complete.
    for (const name of [primary, standby ?? ""]) {
      let caught = false;
      for (let i = 0; i < 80 && !caught; i++) {
        await post();
        const rows = await checkpointRows(name);
        if (rows.staged === 0) continue;
        caught = true;
        await restart(name);
        // The previous checkpoint still loads: the log behind it was kept.
        expect((await checkpointRows(name)).checkpointLsn).toBe(rows.checkpointLsn);
        await post();
        await expectExact(id, stream, acked);
      }
      expect(caught, `${name} was never caught in the middle of a checkpoint`).toBe(true);
    }

    // Both finish a later spread checkpoint and load from it after a restart.
    const before = await Promise.all([primary, standby ?? ""].map(checkpointRows));
    for (let i = 0; i < 80; i++) {
      const now = await Promise.all([primary, standby ?? ""].map(checkpointRows));
      if (now.every((rows, r) => rows.staged === 0 && rows.checkpointLsn > (before[r]?.checkpointLsn ?? 0))) break;
      await post();
    }
    const after = await Promise.all([primary, standby ?? ""].map(checkpointRows));
    after.forEach((rows, r) => expect(rows.checkpointLsn).toBeGreaterThan(before[r]?.checkpointLsn ?? 0));
    await restart(standby ?? "");
    await restart(primary);
    await post();
    expect((await routing(id))[0]?.primary).toBe(primary);
    await expectExact(id, stream, acked);
  });
});
