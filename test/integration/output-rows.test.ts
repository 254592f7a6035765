/**
 * Closed-window outputs are stored a chunk of rows per statement (issue 12: a statement per
 * row cost most of a large window's close). What is read back must be exactly what was
 * written, row for row, whatever the keys hold and however many chunks a step needs.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SqlReplicaStorage } from "../../durable-objects/sql-replica-storage.ts";
import { readCounters } from "../../platform/counters.ts";
import { DataflowSpecSchema } from "../../shared/dataflow-checks/dataflow-spec-schema.ts";
import type { ReplicaMeta } from "../../shared/wire/persisted.ts";
import type { NumberedOutput } from "../../shared/wire/replica-rpc.ts";
import { clicksSpec, uniqueName } from "../helpers/api.ts";

const spec = DataflowSpecSchema.parse(clicksSpec("s", { partitions: 1, replication: 2 }));
const meta: ReplicaMeta = {
  v: 1, name: "x", dataflowId: "x", partition: 0, spec, role: "primary", epoch: 1, hasStandby: true, standby: "y", lsn: 1, appliedLsn: 1,
  standbyAckLsn: 1, checkpointLsn: 0, checkpointOutputSeq: 0, outputSeq: 0, holdLogAfterLsn: null, configVersion: 1, readers: [],
};

/** `count` outputs of one window from `firstSeq` on, with keys that need escaping in JSON and in SQL. */
function outputs(count: number, firstSeq: number, windowStartMs: number): NumberedOutput[] {
  return Array.from({ length: count }, (_, i) => ({
    outputSeq: firstSeq + i,
    result: {
      key: `k'"\\\n ü€ \ud800 ${String(i).padStart(6, "0")}`,
      windowStartMs,
      windowEndMs: windowStartMs + 60_000,
      values: { clicks: i, bytes: i * 0.1 + 1e-7, label: `v "${i}"` },
      closed: true,
    },
  }));
}

describe("output rows", () => {
  it("stores a close of many outputs (several chunks) row for row, and bills the rows a statement per row would", async () => {
    const stub = env.PARTITION_REPLICA.getByName(uniqueName("outputs"));
    await runInDurableObject(stub, (_instance, state) => {
      const storage = new SqlReplicaStorage(state.storage);
      storage.persist(meta, { log: [], outputs: [] });
      // ~160 characters a row: 20,000 rows take four chunks of at most 1M characters.
      const closed = outputs(20_000, 1, 60_000);
      const before = readCounters().rowsWritten;
      storage.persist({ ...meta, outputSeq: closed.length }, { log: [], outputs: closed });
      const rowsWritten = readCounters().rowsWritten - before;
      expect(state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM outputs").one().n).toBe(20_000);
      // Each output row and its index entry, and one meta part (the progress), as with a statement per row.
      expect(rowsWritten).toBe(2 * 20_000 + 1);
      expect(storage.readOutputPage(0, 100_000)).toEqual(closed);
      const first = closed[0]?.result;
      expect(first && storage.readOutputs({ key: first.key }, 60_000)).toEqual([first]);
      const typed = state.storage.sql.exec("SELECT typeof(output_seq) AS s, typeof(key) AS k, typeof(window_start) AS w, typeof(body) AS b FROM outputs LIMIT 1").one();
      expect(typed).toEqual({ s: "integer", k: "text", w: "integer", b: "text" });
    });
  });

  it("restages outputs a seed copies over ones it already holds, without duplicates", async () => {
    const stub = env.PARTITION_REPLICA.getByName(uniqueName("staged"));
    await runInDurableObject(stub, (_instance, state) => {
      const storage = new SqlReplicaStorage(state.storage);
      storage.persist(meta, { log: [], outputs: [] });
      const page = outputs(300, 1, 120_000);
      storage.stageOutputs(page.slice(0, 200));
      storage.stageOutputs(page.slice(100));
      expect(storage.countOutputs()).toBe(300);
      expect(storage.readOutputPage(0, 1_000)).toEqual(page);
    });
  });
});
