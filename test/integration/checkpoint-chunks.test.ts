/**
 * Checkpoints are stored in chunks of text; SQLite keeps text as UTF-8, where half a
 * surrogate pair cannot be represented. A checkpoint whose chunk boundary falls inside a
 * key such as an emoji must still come back exactly.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SqlReplicaStorage } from "../../durable-objects/sql-replica-storage.ts";
import type { Checkpoint, ReplicaMeta } from "../../shared/wire/persisted.ts";
import { spec } from "../helpers/fixtures.ts";

const meta: ReplicaMeta = {
  v: 1,
  name: "chunks/p0/g0",
  dataflowId: "chunks",
  partition: 0,
  spec: spec(),
  role: "primary",
  epoch: 1,
  standby: null,
  hasStandby: false,
  lsn: 0,
  appliedLsn: 0,
  standbyAckLsn: 0,
  checkpointLsn: 0,
  outputSeq: 0,
  checkpointOutputSeq: 0,
  holdLogAfterLsn: null,
  configVersion: 0,
};

describe("checkpoint chunks", () => {
  it("shows the hazard: a lone surrogate does not survive SQLite text", async () => {
    const stub = env.PARTITION_REPLICA.getByName("chunks-probe");
    const back = await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec("CREATE TABLE IF NOT EXISTS probe (body TEXT)");
      state.storage.sql.exec("INSERT INTO probe (body) VALUES (?)", "a\uD83D");
      return state.storage.sql.exec<{ body: string }>("SELECT body FROM probe").one().body;
    });
    expect(back).not.toBe("a\uD83D");
  });

  it("come back exactly when a boundary falls inside a surrogate pair", async () => {
    const stub = env.PARTITION_REPLICA.getByName("chunks-roundtrip");
    const checkpoint: Checkpoint = {
      v: 1,
      lsn: 0,
      outputSeq: 0,
      operator: { maxTimeMs: 5, lateRecords: 0, open: { "0": { "$😀🎉": { n: 1, sum: [1], min: [1], max: [1] }, "$𝄞x": { n: 2, sum: [3], min: [1], max: [2] } } } },
      dedup: {},
    };
    const body = JSON.stringify(checkpoint);
    const loaded = await runInDurableObject(stub, (_instance, state) => {
      // Every chunk size from 2 to 12 puts some boundary inside one of the pairs.
      return Array.from({ length: 11 }, (_, i) => {
        const storage = new SqlReplicaStorage(state.storage, i + 2);
        storage.persist(meta, { log: [], outputs: [], checkpoint: { lsn: 0, body } });
        return storage.loadCheckpoint();
      });
    });
    for (const restored of loaded) expect(restored).toEqual(checkpoint);
  });
});
