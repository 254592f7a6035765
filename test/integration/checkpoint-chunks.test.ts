/**
 * Checkpoints are stored as rows of text; SQLite keeps text as UTF-8, where half a
 * surrogate pair cannot be represented. A checkpoint whose row boundary falls inside a
 * key such as an emoji must still come back exactly, in the sliced format (issue 12) and
 * in the single-JSON format stored before it (`v: 1`), which must still load.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SqlReplicaStorage } from "../../durable-objects/sql-replica-storage.ts";
import { checkpointPieces, restoreCheckpoint } from "../../shared/checkpoint/checkpoint-pieces.ts";
import { compileDataflow } from "../../shared/operators/compile.ts";
import type { Checkpoint, ReplicaMeta } from "../../shared/wire/persisted.ts";
import { chunkText } from "../../shared/checkpoint/chunk-text.ts";
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
  readers: [],
};

const operatorState = { maxTimeMs: 5, lateRecords: 0, open: { "0": { "$😀🎉": { n: 1, sum: [1], min: [1], max: [1] }, "$𝄞x": { n: 2, sum: [3], min: [1], max: [2] } } } };
const dedup = { p: { high: 3, applied: [1, 2, 3], floor: 0 } };

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

  it("come back exactly, sliced, when a row boundary falls inside a surrogate pair", async () => {
    const stub = env.PARTITION_REPLICA.getByName("chunks-roundtrip");
    const live = compileDataflow(meta.spec).bind(operatorState);
    // One key per slice: the header and two slice pieces, each cut into rows.
    const pieces = checkpointPieces(7, 2, dedup, live, 1);
    expect(pieces).toHaveLength(3);
    const loaded = await runInDurableObject(stub, (_instance, state) => {
      // Every row size from 3 to 13 puts some boundary inside one of the pairs.
      return Array.from({ length: 11 }, (_, i) => {
        const storage = new SqlReplicaStorage(state.storage, i + 3);
        storage.persist(meta, { log: [], outputs: [], checkpoint: { lsn: 7, pieces } });
        const restored = restoreCheckpoint(meta.spec, storage.loadCheckpointRows(7));
        return restored && { lsn: restored.lsn, outputSeq: restored.outputSeq, dedup: restored.dedup, operator: restored.operator.snapshot() };
      });
    });
    for (const restored of loaded) expect(restored).toEqual({ lsn: 7, outputSeq: 2, dedup, operator: operatorState });
  });

  it("load from the single-JSON format stored before slicing (v: 1)", async () => {
    const stub = env.PARTITION_REPLICA.getByName("chunks-v1");
    const checkpoint: Checkpoint = { v: 1, lsn: 4, outputSeq: 1, operator: operatorState, dedup };
    const loaded = await runInDurableObject(stub, (_instance, state) => {
      const storage = new SqlReplicaStorage(state.storage);
      // As the adapter before issue 12 wrote it: one JSON text cut every 5 units.
      chunkText(JSON.stringify(checkpoint), 5).forEach((chunk, i) => state.storage.sql.exec("INSERT INTO checkpoint (chunk, lsn, body) VALUES (?, ?, ?)", i, 4, chunk));
      const restored = restoreCheckpoint(meta.spec, storage.loadCheckpointRows(4));
      return restored && { lsn: restored.lsn, outputSeq: restored.outputSeq, dedup: restored.dedup, operator: restored.operator.snapshot() };
    });
    expect(loaded).toEqual({ lsn: 4, outputSeq: 1, dedup, operator: operatorState });
  });
});
