/**
 * Rows written per step (issue 12), counted by the platform's own cursor counts: a write
 * stores one log row on the primary and one on the standby, and no progress row. Restarts
 * after such writes (the stored progress behind memory) lose nothing: results, LSNs and
 * the dedup of resends come back exactly.
 */
import { env } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CountersSchema } from "../../shared/wire/admin.ts";
import { call, createDataflow, postEvents, results } from "../helpers/api.ts";

const ADMIN = { authorization: "Bearer test-admin-token" };

async function rowsWritten(): Promise<number> {
  const res = await call("GET", "/v1/admin/counters", undefined, ADMIN);
  return CountersSchema.parse(await res.json()).rowsWritten;
}

async function pair(id: string): Promise<{ primary: string; standby: string }> {
  const body = (await (await call("GET", `/v1/dataflows/${id}`)).json()) as { dataflow: { partitions: { primary: string; standby: string | null }[] } };
  const p = body.dataflow.partitions[0];
  if (!p?.standby) throw new Error(`${id}: no standby`);
  return { primary: p.primary, standby: p.standby };
}

const replica = (name: string) => env.PARTITION_REPLICA.getByName(name);
const progress = async (name: string) => {
  const s = await replica(name).status();
  return s && { lsn: s.lsn, appliedLsn: s.appliedLsn, standbyAckLsn: s.standbyAckLsn, checkpointLsn: s.checkpointLsn, outputSeq: s.outputSeq };
};
/** The progress row as stored, which a write no longer rewrites. */
const storedLsn = (name: string) =>
  runInDurableObject(replica(name), (_instance, state) => {
    const row = state.storage.sql.exec<{ body: string }>("SELECT body FROM meta_parts WHERE part = 'progress'").one();
    return (JSON.parse(row.body) as { lsn: number }).lsn;
  });
const events = (seq: number) => [{ page: `p${seq % 3}`, ts: 1_000 + seq, bytes: seq }];

describe("rows per write", () => {
  it("a post to one partition writes exactly one row on each replica (its log row) and none for progress", async () => {
    const { stream } = await createDataflow({ partitions: 1, replication: 2 });
    // FLUX_CHECKPOINT_EVERY is 4: the first three writes take no checkpoint. Each replica
    // logs at least one row per write, so 2 in all means 1 each and nothing else (no
    // progress row on the write, the forward or the acknowledgement).
    for (let seq = 1; seq <= 3; seq++) {
      const before = await rowsWritten();
      expect((await postEvents(stream, "rows", seq, events(seq))).status).toBe(200);
      expect(await rowsWritten(), `post ${seq}`).toBe(before + 2);
    }
  });
});

describe("restart after writes that left the stored progress behind", () => {
  it("a restarted standby and then a restarted primary keep results, LSNs and dedup exactly", async () => {
    const { id, stream } = await createDataflow({ partitions: 1, replication: 2 });
    const { primary, standby } = await pair(id);
    // Six writes: a checkpoint at LSN 4 stores progress, 5 and 6 only log rows.
    for (let seq = 1; seq <= 6; seq++) expect((await postEvents(stream, "restart", seq, events(seq))).status).toBe(200);
    const before = { results: await results(id), primary: await progress(primary), standby: await progress(standby) };
    expect(before.primary).toEqual({ lsn: 6, appliedLsn: 6, standbyAckLsn: 6, checkpointLsn: 4, outputSeq: 0 });
    expect(before.standby).toMatchObject({ lsn: 6, appliedLsn: 6, checkpointLsn: 4 });
    expect([await storedLsn(primary), await storedLsn(standby)]).toEqual([4, 4]);

    await evictDurableObject(replica(standby));
    expect(await progress(standby)).toEqual(before.standby);
    // The restarted standby takes LSN 7 next: its LSN came from its log, not its progress row.
    const seventh = await postEvents(stream, "restart", 7, events(7));
    expect(seventh.status).toBe(200);
    expect(await seventh.json()).toMatchObject({ duplicate: false, dataflows: [{ dataflow: id, partitions: [{ partition: 0, lsn: 7, replicated: true }] }] });
    const after7 = await results(id);

    await evictDurableObject(replica(primary));
    // Entries 5 to 7 come back pending on the primary: a resend waits for the standby to confirm its entry again.
    const resent = await postEvents(stream, "restart", 6, events(6));
    expect(await resent.json()).toMatchObject({ duplicate: true, dataflows: [{ partitions: [{ partition: 0, lsn: 6, replicated: true, duplicate: true }] }] });
    expect(await results(id)).toEqual(after7);
    expect(await progress(primary)).toEqual({ ...before.primary, lsn: 7, appliedLsn: 7, standbyAckLsn: 7 });
    await evictDurableObject(replica(primary));
    // A read right after a load waits for the pending entries too: open results never go back.
    expect(await results(id)).toEqual(after7);
    for (const seq of [5, 7]) {
      const resend = await postEvents(stream, "restart", seq, events(seq));
      expect(resend.status).toBe(200);
      expect(await resend.json(), `resend of ${seq}`).toMatchObject({ duplicate: true, dataflows: [{ partitions: [{ partition: 0, lsn: 7, duplicate: true }] }] });
    }
    expect(await results(id)).toEqual(after7);
    expect(await results(id)).not.toEqual(before.results);
    const eighth = await postEvents(stream, "restart", 8, events(8));
    expect(await eighth.json()).toMatchObject({ duplicate: false, dataflows: [{ dataflow: id, partitions: [{ partition: 0, lsn: 8, replicated: true }] }] });
  });
});
