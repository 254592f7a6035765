/** The replica state machine through ReplicaHost over memory: LSNs, dedup, stable prefix, gap fill, durability. */
import { describe, expect, it } from "vitest";
import { ReplicaHost } from "../../shared/replica/replica-host.ts";
import type { LogEntry } from "../../shared/wire/persisted.ts";
import { MemoryReplicaStorage } from "../helpers/memory-replica-storage.ts";
import { spec } from "../helpers/fixtures.ts";

const tuning = { dedupWindow: 64, checkpointEvery: 3 };

function replica(role: "primary" | "standby", hasStandby = role === "primary", storage = new MemoryReplicaStorage()) {
  const host = new ReplicaHost(storage, tuning);
  host.init({ name: `r-${role}`, dataflowId: "df", partition: 0, spec: spec(), role, epoch: 1, hasStandby, version: 1, create: true });
  return { host, storage };
}

const batch = (seq: number, key = "a", ts = 100, bytes = 1, producer = "p") => ({
  epoch: 1,
  producer,
  seq,
  records: JSON.stringify([[key, ts, bytes]]),
});

const entry = (lsn: number, seq = lsn): LogEntry => ({ lsn, producer: "p", seq, records: JSON.stringify([["a", 100, 1]]) });

const count = (host: ReplicaHost) => {
  const reply = host.readResults(1, { key: "a" });
  if (reply.status !== "ok") throw new Error(`refused: ${reply.status}`);
  return reply.results.reduce((n, r) => n + (Number(r.values.n ?? 0)), 0);
};

describe("primary", () => {
  it("assigns consecutive LSNs and dedups a resent (producer, seq)", () => {
    const { host } = replica("primary", false);
    expect(host.applyBatch(batch(1))).toEqual({ status: "applied", lsn: 1, late: 0 });
    expect(host.applyBatch(batch(2))).toEqual({ status: "applied", lsn: 2, late: 0 });
    expect(host.applyBatch(batch(1))).toEqual({ status: "duplicate", lsn: 2 });
    expect(count(host)).toBe(2);
  });

  it("treats a seq still pending standby acknowledgement as a duplicate", () => {
    const { host } = replica("primary");
    expect(host.applyBatch(batch(7))).toEqual({ status: "applied", lsn: 1 });
    expect(host.applyBatch(batch(7))).toEqual({ status: "duplicate", lsn: 1 });
  });

  it("applies to the operator only once the standby acknowledged (stable prefix)", () => {
    const { host } = replica("primary");
    host.applyBatch(batch(1));
    host.applyBatch(batch(2));
    expect(count(host)).toBe(0);
    expect(host.ackStandby({ epoch: 1, lsn: 1 })).toEqual({ status: "ok", appliedLsn: 1 });
    expect(count(host)).toBe(1);
    host.ackStandby({ epoch: 1, lsn: 99 });
    expect(count(host)).toBe(2);
    expect(host.status()?.standbyAckLsn).toBe(2);
  });

  it("refuses a stale epoch, a newer unknown epoch and a standby-only call", () => {
    const { host } = replica("primary");
    host.init({ name: "r-primary", dataflowId: "df", partition: 0, spec: spec(), role: "primary", epoch: 3, hasStandby: true, version: 1 });
    expect(host.applyBatch({ ...batch(1), epoch: 2 })).toEqual({ status: "stale", epoch: 3 });
    expect(host.applyBatch({ ...batch(1), epoch: 4 })).toEqual({ status: "behind", epoch: 3 });
    expect(host.replicate({ epoch: 3, entries: [], upToLsn: 0 })).toEqual({ status: "wrong-role", role: "primary" });
    expect(host.readResults(2, {})).toEqual({ status: "stale", epoch: 3 });
    expect(host.init({ name: "r-primary", dataflowId: "df", partition: 0, spec: spec(), role: "primary", epoch: 2, hasStandby: true, version: 1 })).toEqual({
      status: "stale",
      epoch: 3,
    });
  });

  it("answers too-old for a seq below the dedup window instead of guessing", () => {
    const { host } = replica("primary", false);
    host.applyBatch(batch(1));
    host.applyBatch(batch(1 + tuning.dedupWindow + 5));
    expect(host.applyBatch(batch(1))).toEqual({ status: "too-old", high: 1 + tuning.dedupWindow + 5 });
    expect(host.applyBatch(batch(2))).toEqual({ status: "too-old", high: 1 + tuning.dedupWindow + 5 });
    expect(host.applyBatch(batch(10))).toMatchObject({ status: "applied" });
  });
});

describe("standby", () => {
  it("applies strictly in LSN order and reports a gap instead of skipping", () => {
    const { host } = replica("standby");
    expect(host.replicate({ epoch: 1, entries: [entry(2)], upToLsn: 2 })).toEqual({ status: "gap", lsn: 0 });
    expect(host.status()).toMatchObject({ lsn: 0, appliedLsn: 0 });
    expect(host.replicate({ epoch: 1, entries: [entry(2), entry(1)], upToLsn: 2 })).toEqual({ status: "ok", lsn: 2, late: 0 });
    expect(host.replicate({ epoch: 1, entries: [entry(1), entry(2)], upToLsn: 2 })).toEqual({ status: "ok", lsn: 2, late: 0 });
    expect(host.status()).toMatchObject({ lsn: 2, appliedLsn: 2 });
  });

  it("fills a gap from the primary's log", () => {
    const primary = replica("primary");
    const standby = replica("standby");
    for (let seq = 1; seq <= 5; seq++) primary.host.applyBatch(batch(seq));
    expect(standby.host.replicate({ epoch: 1, entries: [entry(5)], upToLsn: 5 })).toEqual({ status: "gap", lsn: 0 });
    const missing = primary.host.readLog(1, 1, 5);
    if (!Array.isArray(missing)) throw new Error("readLog refused");
    expect(missing.map((e) => e.lsn)).toEqual([1, 2, 3, 4, 5]);
    expect(standby.host.replicate({ epoch: 1, entries: missing, upToLsn: 5 })).toEqual({ status: "ok", lsn: 5, late: 0 });
  });
});

describe("durability", () => {
  it("restarts from checkpoint plus log to the same state, pending entries included", () => {
    const storage = new MemoryReplicaStorage();
    const first = replica("primary", true, storage);
    for (let seq = 1; seq <= 8; seq++) first.host.applyBatch(batch(seq, `k${seq % 3}`, seq * 400, seq));
    first.host.ackStandby({ epoch: 1, lsn: 6 });
    const before = first.host.readResults(1, {});
    expect(storage.checkpoint).not.toBeNull();
    const restarted = new ReplicaHost(storage, tuning);
    expect(restarted.readResults(1, {})).toEqual(before);
    expect(restarted.status()).toEqual(first.host.status());
    expect(restarted.applyBatch(batch(8))).toEqual({ status: "duplicate", lsn: 8 });
    restarted.ackStandby({ epoch: 1, lsn: 8 });
    first.host.ackStandby({ epoch: 1, lsn: 8 });
    expect(restarted.readResults(1, {})).toEqual(first.host.readResults(1, {}));
  });

  it("trims the log only behind both the checkpoint and the standby's acknowledgement", () => {
    const { host, storage } = replica("primary");
    let trimmed = false;
    for (let seq = 1; seq <= 40; seq++) {
      host.applyBatch(batch(seq, `k${seq}`, seq * 10, seq));
      // The standby acknowledges every other batch, one behind.
      if (seq % 2 === 0) host.ackStandby({ epoch: 1, lsn: seq - 1 });
      const meta = storage.meta;
      if (!meta) throw new Error("no meta");
      for (let lsn = Math.min(meta.checkpointLsn, meta.standbyAckLsn) + 1; lsn <= meta.lsn; lsn++) {
        expect(storage.log.has(lsn), `LSN ${lsn} after batch ${seq}`).toBe(true);
      }
      trimmed ||= !storage.log.has(1);
    }
    expect(storage.meta?.checkpointLsn).toBeGreaterThan(0);
    expect(trimmed, "the log was trimmed at some point").toBe(true);
  });

  it("spaces checkpoints so their cost stays proportional to the log written", () => {
    const { host, storage } = replica("primary", false);
    let checkpoints = 0;
    let last = storage.checkpoint;
    for (let seq = 1; seq <= 60; seq++) {
      host.applyBatch(batch(seq, `key-${seq}`, 100, 1));
      if (storage.checkpoint !== last) {
        checkpoints += 1;
        last = storage.checkpoint;
      }
    }
    // Every key is new, so the state grows with each batch while each batch adds a little log:
    // a fixed "every 3 batches" would write 20 checkpoints.
    expect(checkpoints).toBeGreaterThan(1);
    expect(checkpoints).toBeLessThan(10);
  });

  it("forgets memory that ran ahead of a failed write and reloads what is durable", () => {
    const { host, storage } = replica("primary", false);
    host.applyBatch(batch(1));
    storage.failNextPersist = true;
    expect(() => host.applyBatch(batch(2))).toThrow(/injected/);
    expect(host.status()?.lsn).toBe(1);
    expect(host.applyBatch(batch(2))).toEqual({ status: "applied", lsn: 2, late: 0 });
  });
});
