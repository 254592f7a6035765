/**
 * The replica's SQLite layout (issue 12): a step writes only the meta parts it changed and
 * one log row for all it logged, into a row a trim freed when there is one; replicas stored
 * by older deploys (the first layout: one meta row, one log row per entry; the second: log
 * rows keyed by first LSN) are migrated when loaded and serve as before.
 */
import { env } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SqlReplicaStorage } from "../../durable-objects/sql-replica-storage.ts";
import { readCounters } from "../../platform/counters.ts";
import { replicaName } from "../../shared/names.ts";
import { DataflowSpecSchema } from "../../shared/dataflow-checks/dataflow-spec-schema.ts";
import type { LogEntry, ReplicaMeta } from "../../shared/wire/persisted.ts";
import { clicksSpec, uniqueName } from "../helpers/api.ts";

const spec = DataflowSpecSchema.parse(clicksSpec("s", { partitions: 1, replication: 2 }));

function firstLayoutMeta(name: string, dataflowId: string): Omit<ReplicaMeta, "standby"> {
  return {
    v: 1, name, dataflowId, partition: 0, spec, role: "primary", epoch: 3, hasStandby: true, lsn: 3, appliedLsn: 1, standbyAckLsn: 1,
    checkpointLsn: 0, checkpointOutputSeq: 0, outputSeq: 0, holdLogAfterLsn: null, configVersion: 2, readers: [],
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

  it("moves the log rows of the second layout (rows keyed by first LSN, one JSON document each) into slots", async () => {
    const stub = env.PARTITION_REPLICA.getByName(uniqueName("groups-layout"));
    await runInDurableObject(stub, (_instance, state) => {
      const sql = state.storage.sql;
      sql.exec("DROP TABLE log_slots");
      sql.exec("CREATE TABLE log_groups (first_lsn INTEGER PRIMARY KEY, last_lsn INTEGER NOT NULL, body TEXT NOT NULL)");
      sql.exec("CREATE INDEX log_groups_by_last ON log_groups (last_lsn)");
      // As the second layout wrote them: a row extended in place, then one row after a gap.
      const v1 = (rows: LogEntry[]) => JSON.stringify({ v: 1, entries: rows.map((e) => [e.producer, e.seq, e.records]) });
      sql.exec("INSERT INTO log_groups VALUES (1, 2, ?), (3, 3, ?)", v1(entries.slice(0, 2)), v1(entries.slice(2)));
      const storage = new SqlReplicaStorage(state.storage);
      expect(sql.exec("SELECT name FROM sqlite_master WHERE name IN ('log_groups', 'log_groups_by_last')").toArray()).toEqual([]);
      expect(storage.readLog(1, 3)).toEqual(entries);
      expect(storage.readLog(2, 2)).toEqual(entries.slice(1, 2));
      // Later steps write rows of the second form beside them; a trim frees the old rows for reuse.
      const meta: ReplicaMeta = { ...firstLayoutMeta("x", "x"), standby: "y" };
      const fourth: LogEntry = { lsn: 4, producer: "q", seq: 1, records: "[]" };
      storage.persist({ ...meta, lsn: 4 }, { log: [fourth], outputs: [] });
      expect(storage.readLog(1, 4)).toEqual([...entries, fourth]);
      storage.persist({ ...meta, lsn: 4, appliedLsn: 4 }, { log: [], outputs: [], trimLogThrough: 2 });
      storage.persist({ ...meta, lsn: 5, appliedLsn: 4 }, { log: [{ ...fourth, lsn: 5, seq: 2 }], outputs: [] });
      expect(sql.exec("SELECT slot, first_lsn FROM log_slots ORDER BY slot").toArray()).toEqual([{ slot: 1, first_lsn: 5 }, { slot: 3, first_lsn: 3 }, { slot: 4, first_lsn: 4 }]);
      expect(storage.readLog(1, 5)).toEqual([entries[2], fourth, { ...fourth, lsn: 5, seq: 2 }]);
    });
  });

  it("writes one log row per step and the progress part only when it must", async () => {
    const stub = env.PARTITION_REPLICA.getByName(uniqueName("layout"));
    await runInDurableObject(stub, (_instance, state) => {
      const storage = new SqlReplicaStorage(state.storage);
      const parts = () => state.storage.sql.exec<{ part: string; body: string }>("SELECT part, body FROM meta_parts ORDER BY part").toArray();
      const meta: ReplicaMeta = { ...firstLayoutMeta("x", "x"), standby: "y", lsn: 0, appliedLsn: 0, standbyAckLsn: 0 };
      storage.persist(meta, { log: [], outputs: [] });
      const before = parts();
      // Only LSNs moved: one row (the log's), no meta part.
      expect(written(() => storage.persist({ ...meta, lsn: 3, appliedLsn: 2, standbyAckLsn: 2 }, { log: entries, outputs: [] }))).toBe(1);
      expect(parts()).toEqual(before);
      expect(state.storage.sql.exec("SELECT first_lsn, last_lsn FROM log_slots").toArray()).toEqual([{ first_lsn: 1, last_lsn: 3 }]);
      expect(storage.readLog(2, 3)).toEqual(entries.slice(1));
      expect(storage.readLog(3, 3)).toEqual(entries.slice(2));
      // Nothing to store: no row and no transaction.
      expect(written(() => storage.persist({ ...meta, lsn: 3, appliedLsn: 3, standbyAckLsn: 3 }, { log: [], outputs: [] }))).toBe(0);
      expect(new SqlReplicaStorage(state.storage).loadMeta()).toEqual({ ...meta, lsn: 0 });
    });
  });

  it("hides trimmed rows behind one stored trim point and rewrites them for later steps, also after a restart", async () => {
    const stub = env.PARTITION_REPLICA.getByName(uniqueName("slots"));
    await runInDurableObject(stub, (_instance, state) => {
      const storage = new SqlReplicaStorage(state.storage);
      const meta: ReplicaMeta = { ...firstLayoutMeta("x", "x"), standby: "y", lsn: 0, appliedLsn: 0, standbyAckLsn: 0 };
      storage.persist(meta, { log: [], outputs: [] });
      const many: LogEntry[] = Array.from({ length: 9 }, (_, i) => ({ lsn: i + 1, producer: `p\n"${i}`, seq: i + 1, records: JSON.stringify([["ü €\n", i, i]]) }));
      const slots = () => state.storage.sql.exec("SELECT slot, first_lsn, last_lsn FROM log_slots ORDER BY slot").toArray();
      for (const group of [many.slice(0, 1), many.slice(1, 3), many.slice(3, 4)]) {
        expect(written(() => storage.persist({ ...meta, lsn: group[group.length - 1]?.lsn ?? 0 }, { log: group, outputs: [] }))).toBe(1);
      }
      expect(slots()).toEqual([{ slot: 1, first_lsn: 1, last_lsn: 1 }, { slot: 2, first_lsn: 2, last_lsn: 3 }, { slot: 3, first_lsn: 4, last_lsn: 4 }]);
      expect(storage.readLog(1, 9)).toEqual(many.slice(0, 4));
      // A row holding an entry still needed stays: LSN 2 is behind the trim point but shares a row with 3.
      // The progress part (1 row) and the first trim point (a new row under a text key: 2).
      expect(written(() => storage.persist({ ...meta, lsn: 4, appliedLsn: 4 }, { log: [], outputs: [], trimLogThrough: 2 }))).toBe(3);
      expect(storage.readLog(1, 9)).toEqual(many.slice(1, 4));
      // The freed row takes the next step's entries (an UPDATE: 1 row).
      expect(written(() => storage.persist({ ...meta, lsn: 5, appliedLsn: 4 }, { log: many.slice(4, 5), outputs: [] }))).toBe(1);
      expect(slots()).toEqual([{ slot: 1, first_lsn: 5, last_lsn: 5 }, { slot: 2, first_lsn: 2, last_lsn: 3 }, { slot: 3, first_lsn: 4, last_lsn: 4 }]);
      const restarted = new SqlReplicaStorage(state.storage);
      expect(restarted.loadMeta()).toEqual({ ...meta, lsn: 4, appliedLsn: 4 });
      expect(restarted.readLog(1, 9)).toEqual(many.slice(1, 5));
      // A later trim point is one UPDATE (with the progress part: 2 rows); past a gap, entries start their own row.
      expect(written(() => restarted.persist({ ...meta, lsn: 5, appliedLsn: 5 }, { log: [], outputs: [], trimLogThrough: 4 }))).toBe(2);
      expect(restarted.readLog(1, 9)).toEqual(many.slice(4, 5));
      restarted.persist({ ...meta, lsn: 9 }, { log: [...many.slice(5, 6), ...many.slice(7, 9)], outputs: [] });
      expect(slots().map((row) => Number(row.first_lsn)).sort((a, b) => a - b)).toEqual([5, 6, 8]);
      expect(restarted.readLog(1, 9).map((e) => e.lsn)).toEqual([5, 6, 8, 9]);
      expect(restarted.readLog(9, 9)).toEqual(many.slice(8, 9));
      // A row whose head does not match its records is refused, not read short.
      state.storage.sql.exec("UPDATE log_slots SET body = substr(body, 1, length(body) - 1) WHERE first_lsn = 8");
      expect(() => new SqlReplicaStorage(state.storage).readLog(8, 9)).toThrow(/log row at LSN 8 holds/);
    });
  });

  it("deletes free rows beyond the ones kept for reuse, a few per step", async () => {
    const stub = env.PARTITION_REPLICA.getByName(uniqueName("shrink"));
    await runInDurableObject(stub, (_instance, state) => {
      const storage = new SqlReplicaStorage(state.storage);
      const meta: ReplicaMeta = { ...firstLayoutMeta("x", "x"), standby: "y", lsn: 0, appliedLsn: 0, standbyAckLsn: 0 };
      storage.persist(meta, { log: [], outputs: [] });
      const steps = 1_024 + 100;
      for (let lsn = 1; lsn <= steps; lsn++) storage.persist({ ...meta, lsn }, { log: [{ lsn, producer: "p", seq: lsn, records: "[]" }], outputs: [] });
      const count = () => state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM log_slots").one().n;
      expect(count()).toBe(steps);
      // Read by key, 100 rows per query: all of them, in order, also after a restart.
      expect(storage.readLog(1, steps).map((e) => e.lsn)).toEqual(Array.from({ length: steps }, (_, i) => i + 1));
      expect(new SqlReplicaStorage(state.storage).readLog(150, 450).map((e) => e.lsn)).toEqual(Array.from({ length: 301 }, (_, i) => i + 150));
      storage.persist({ ...meta, lsn: steps, appliedLsn: steps }, { log: [], outputs: [], trimLogThrough: steps });
      expect(count()).toBe(steps - 64);
      // The next steps, even with nothing else to store, delete the rest.
      storage.persist({ ...meta, lsn: steps, appliedLsn: steps }, { log: [], outputs: [] });
      expect(count()).toBe(1_024);
      storage.persist({ ...meta, lsn: steps, appliedLsn: steps }, { log: [], outputs: [] });
      expect(count()).toBe(1_024);
      expect(storage.readLog(0, steps)).toEqual([]);
    });
  });
});

function written(run: () => void): number {
  const before = readCounters().rowsWritten;
  run();
  return readCounters().rowsWritten - before;
}
