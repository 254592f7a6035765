/**
 * Issue 12 in workerd: a fresh standby is seeded from a checkpoint of several slices,
 * restored one slice per copied chunk, then the primary crashes and the seeded replica
 * takes over. Results stay exact, and the seeded replica's checkpoint is the sliced rows
 * it was sent (moved in SQL, not rewritten).
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createDataflow } from "../helpers/api.ts";
import { SqlReplicaStorage } from "../../durable-objects/sql-replica-storage.ts";
import { expectExact, fault, faultSpec, postUntilAcked, routing, tickUntilHealthy, type Event } from "../helpers/fault-client.ts";

/** 1,000 new pages per batch: 12 batches make 12,000 keys, three slices of 5,000 entries or fewer. */
const batchOf = (seq: number): Event[] => Array.from({ length: 1_000 }, (_, i) => ({ page: `p${seq}-${i}`, ts: 1_000 + i, bytes: seq }));

/** The stored checkpoint's rows (not rows a checkpoint in progress staged beside them). */
async function checkpointRows(name: string): Promise<string[]> {
  return runInDurableObject(env.PARTITION_REPLICA.getByName(name), (_instance, state) => {
    const storage = new SqlReplicaStorage(state.storage);
    return storage.loadCheckpointRows(storage.loadMeta()?.checkpointLsn ?? 0);
  });
}

describe("seeding from a sliced checkpoint", () => {
  it("gives a standby that takes over with exact results", { timeout: 120_000 }, async () => {
    const { id, stream } = await createDataflow({ ...faultSpec, partitions: 1 });
    const acked: Event[][] = [];
    const post = async (seq: number) => {
      await postUntilAcked(stream, "seeder", seq, batchOf(seq));
      acked.push(batchOf(seq));
    };
    for (let seq = 1; seq <= 12; seq++) await post(seq);
    const first = (await routing(id))[0];
    expect((await fault(first?.standby ?? "", "crash")).status).toBe(200);
    await post(13);
    await tickUntilHealthy(id);

    const seeded = (await routing(id))[0]?.standby ?? "";
    expect(seeded).not.toBe(first?.standby);
    const rows = await checkpointRows(seeded);
    // A header and at least three slices, each row marked as ending its piece or not.
    expect(rows.length).toBeGreaterThanOrEqual(4);
    expect(rows.every((row) => row.startsWith(".") || row.startsWith("+"))).toBe(true);
    // Installed as the rows it was sent, unless catching up from the seed's LSN made a checkpoint of its own due since.
    const [seededLsn, primaryLsn] = await Promise.all([seeded, first?.primary ?? ""].map(async (name) => (await env.PARTITION_REPLICA.getByName(name).status())?.checkpointLsn ?? 0));
    if (seededLsn === primaryLsn) expect(rows).toEqual(await checkpointRows(first?.primary ?? ""));
    else expect(seededLsn).toBeGreaterThan(primaryLsn ?? 0);

    await post(14);
    expect((await fault(first?.primary ?? "", "crash")).status).toBe(200);
    await post(15);
    await tickUntilHealthy(id);
    expect((await routing(id))[0]?.primary).toBe(seeded);
    await post(16);
    await expectExact(id, stream, acked);
  });
});
