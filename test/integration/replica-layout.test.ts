/**
 * The replica's SQLite layout (issue 12): a step writes only the meta parts it changed and
 * one log row for all it logged; a replica stored by an older deploy in the first layout
 * (one meta row, one log row per entry) is migrated when loaded and serves as before.
 */
import { env } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SqlReplicaStorage } from "../../durable-objects/sql-replica-storage.ts";
import { readCounters } from "../../platform/counters.ts";
import { replicaName } from "../../shared/names.ts";
import { DataflowSpecSchema } from "../../shared/wire/dataflow-spec.ts";
import type { LogEntry, ReplicaMeta } from "../../shared/wire/persisted.ts";
import { clicksSpec, uniqueName } from "../helpers/api.ts";

const spec = DataflowSpecSchema.parse(clicksSpec("s", { partitions: 1, replication: 2 }));

function firstLayoutMeta(name: string, dataflowId: string): Omit<ReplicaMeta, "standby"> {
  return {
    v: 1, name, dataflowId, partition: 0, spec, role: "primary", epoch: 3, hasStandby: true, lsn: 3, appliedLsn: 1, standbyAckLsn: 1,
    checkpointLsn: 0, checkpointOutputSeq: 0, outputSeq: 0, holdLogAfterLsn: null, configVersion: 2,
  };
}

const entries: LogEntry[] = [1, 2, 3].map((lsn) => ({ lsn, producer: "p", seq: lsn, records: JSON.stringify([["a", lsn, lsn]]) }));

describe("replica storage layout", () => {
  it("migrates a replica stored in the first layout when it is loaded", async () => {
    const dataflowId = uniqueName("old-layout");
    const name = replicaName(dataflowId, 0, 0);
    const stub = env.PARTITION_REPLICA.getByName(name);
    await runInDurableObject(stub, (_instance, state) => {
      // What the first layout left behind (its tables did not exist in this object yet).
      state.storage.sql.exec("CREATE TABLE meta (id INTEGER PRIMARY KEY CHECK (id = 1), body TEXT NOT NULL)");
      state.storage.sql.exec("CREATE TABLE log (lsn INTEGER PRIMARY KEY, producer TEXT NOT NULL, seq INTEGER NOT NULL, records TEXT NOT NULL)");
      state.storage.sql.exec("INSERT INTO meta (id, body) VALUES (1, ?)", JSON.stringify(firstLayoutMeta(name, dataflowId)));
      for (const e of entries) state.storage.sql.exec("INSERT INTO log (lsn, producer, seq, records) VALUES (?, ?, ?, ?)", e.lsn, e.producer, e.seq, e.records);
    });
    await evictDurableObject(stub);
    expect(await stub.status()).toMatchObject({ name, epoch: 3, lsn: 3, appliedLsn: 1, standbyAckLsn: 1, hasStandby: true, standby: null, configVersion: 2 });
    expect(await stub.readLog(3, 1, 3)).toEqual(entries);
    const tables = await runInDurableObject(stub, (_instance, state) =>
      state.storage.sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('meta', 'log')").toArray(),
    );
    expect(tables).toEqual([]);
  });

  it("writes one log row per step, the progress part only when it must, and drops the old last_lsn index", async () => {
    const stub = env.PARTITION_REPLICA.getByName(uniqueName("layout"));
    await runInDurableObject(stub, (_instance, state) => {
      // The index an earlier deploy made (the object's own storage has just dropped it, if any).
      state.storage.sql.exec("CREATE INDEX log_groups_by_last ON log_groups (last_lsn)");
      const storage = new SqlReplicaStorage(state.storage);
      expect(state.storage.sql.exec("SELECT name FROM sqlite_master WHERE name = 'log_groups_by_last'").toArray()).toEqual([]);
      const written = (run: () => void) => {
        const before = readCounters().rowsWritten;
        run();
        return readCounters().rowsWritten - before;
      };
      const parts = () => state.storage.sql.exec<{ part: string; body: string }>("SELECT part, body FROM meta_parts ORDER BY part").toArray();
      const meta: ReplicaMeta = { ...firstLayoutMeta("x", "x"), standby: "y", lsn: 0, appliedLsn: 0, standbyAckLsn: 0 };
      storage.persist(meta, { log: [], outputs: [] });
      const before = parts();
      // Only LSNs moved: one row (the log's), no meta part.
      expect(written(() => storage.persist({ ...meta, lsn: 3, appliedLsn: 2, standbyAckLsn: 2 }, { log: entries, outputs: [] }))).toBe(1);
      expect(parts()).toEqual(before);
      expect(state.storage.sql.exec("SELECT first_lsn, last_lsn FROM log_groups").toArray()).toEqual([{ first_lsn: 1, last_lsn: 3 }]);
      expect(storage.readLog(2, 3)).toEqual(entries.slice(1));
      expect(storage.readLog(3, 3)).toEqual(entries.slice(2));
      // Trimming drops whole rows only: LSN 1 is behind the trim point but shares a row with 2 and 3.
      // It stores the progress exactly, with one UPDATE (one row).
      expect(written(() => storage.persist({ ...meta, lsn: 3, appliedLsn: 3 }, { log: [], outputs: [], trimLogThrough: 1 }))).toBe(1);
      expect(parts().filter((row, i) => row.body !== before[i]?.body).map((row) => row.part)).toEqual(["progress"]);
      expect(storage.readLog(1, 3)).toEqual(entries);
      expect(written(() => storage.persist({ ...meta, lsn: 3, appliedLsn: 3 }, { log: [], outputs: [], trimLogThrough: 3 }))).toBe(1);
      expect(storage.readLog(1, 3)).toEqual([]);
      expect(new SqlReplicaStorage(state.storage).loadMeta()).toEqual({ ...meta, lsn: 3, appliedLsn: 3 });
    });
  });

  it("extends the log row it wrote last (one row written per step), and starts a new row after a restart or past a gap", async () => {
    const stub = env.PARTITION_REPLICA.getByName(uniqueName("segments"));
    await runInDurableObject(stub, (_instance, state) => {
      const storage = new SqlReplicaStorage(state.storage);
      const meta: ReplicaMeta = { ...firstLayoutMeta("x", "x"), standby: "y", lsn: 0, appliedLsn: 0, standbyAckLsn: 0 };
      storage.persist(meta, { log: [], outputs: [] });
      const many: LogEntry[] = Array.from({ length: 9 }, (_, i) => ({ lsn: i + 1, producer: "p", seq: i + 1, records: JSON.stringify([["ü €", i, i]]) }));
      const rows = () => state.storage.sql.exec("SELECT first_lsn, last_lsn FROM log_groups ORDER BY first_lsn").toArray();
      for (const group of [many.slice(0, 1), many.slice(1, 3), many.slice(3, 4)]) {
        const before = readCounters().rowsWritten;
        storage.persist({ ...meta, lsn: group[group.length - 1]?.lsn ?? 0 }, { log: group, outputs: [] });
        expect(readCounters().rowsWritten - before).toBe(1);
      }
      expect(rows()).toEqual([{ first_lsn: 1, last_lsn: 4 }]);
      expect(storage.readLog(1, 9)).toEqual(many.slice(0, 4));
      const restarted = new SqlReplicaStorage(state.storage);
      restarted.loadMeta();
      restarted.persist({ ...meta, lsn: 5 }, { log: many.slice(4, 5), outputs: [] });
      restarted.persist({ ...meta, lsn: 8 }, { log: many.slice(6, 8), outputs: [] });
      restarted.persist({ ...meta, lsn: 9 }, { log: many.slice(8, 9), outputs: [] });
      expect(rows()).toEqual([{ first_lsn: 1, last_lsn: 4 }, { first_lsn: 5, last_lsn: 5 }, { first_lsn: 7, last_lsn: 9 }]);
      expect(restarted.readLog(2, 9).map((e) => e.lsn)).toEqual([2, 3, 4, 5, 7, 8, 9]);
      expect(restarted.readLog(8, 9)).toEqual(many.slice(7, 9));
      // A trim that drops the row being extended: the next entries start a new row.
      restarted.persist({ ...meta, lsn: 9 }, { log: [], outputs: [], trimLogThrough: 9 });
      restarted.persist({ ...meta, lsn: 10 }, { log: [{ lsn: 10, producer: "p", seq: 10, records: "[]" }], outputs: [] });
      expect(rows()).toEqual([{ first_lsn: 10, last_lsn: 10 }]);
    });
  });
});
