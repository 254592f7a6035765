/** The replica state machine through ReplicaHost over memory: LSNs, dedup, stable prefix, gap fill, durability. */
import { describe, expect, it } from "vitest";
import type { ForwardPort } from "../../shared/replica/forwarder.ts";
import { ReplicaHost } from "../../shared/replica/replica-host.ts";
import type { LogEntry } from "../../shared/wire/persisted.ts";
import type { Replicate, ReplicateReply } from "../../shared/wire/replica-rpc.ts";
import { MemoryReplicaStorage } from "../helpers/memory-replica-storage.ts";
import { spec } from "../helpers/fixtures.ts";

const tuning = { dedupWindow: 64, checkpointEvery: 3 };

/** Forwards held until the test releases them (answered by `answer`, or failed). */
class HeldForwards implements ForwardPort {
  readonly held: { msg: Replicate; release(fail?: boolean): void }[] = [];
  answer: (msg: Replicate) => ReplicateReply = (msg) => ({ status: "ok", lsn: msg.upToLsn });
  replicate(_standby: string, msg: Replicate): Promise<ReplicateReply> {
    return new Promise((resolve, reject) =>
      this.held.push({ msg, release: (fail) => (fail ? reject(new Error("standby down")) : resolve(this.answer(msg))) }),
    );
  }
  /** Releases every held forward, and those they lead to, until none is left. */
  async drain(fail = false): Promise<void> {
    for (let i = 0; i < 50 && this.held.length > 0; i++) {
      for (const f of this.held.splice(0)) f.release(fail);
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  }
}

function replica(role: "primary" | "standby", hasStandby = role === "primary", storage = new MemoryReplicaStorage(), forwards = new HeldForwards()) {
  const host = new ReplicaHost(storage, tuning, forwards);
  const standby = hasStandby ? "r-standby" : null;
  host.init({ name: `r-${role}`, dataflowId: "df", partition: 0, spec: spec(), role, epoch: 1, hasStandby, standby, version: 1, create: true });
  return { host, storage, forwards };
}

const one = (seq: number, key = "a", ts = 100, bytes = 1, producer = "p") => ({ producer, seq, records: JSON.stringify([[key, ts, bytes]]) });
const batch = (seq: number, key = "a", ts = 100, bytes = 1, producer = "p") => ({ epoch: 1, batches: [one(seq, key, ts, bytes, producer)] });
const flushed = () => new Promise((resolve) => setTimeout(resolve, 0));

const entry = (lsn: number, seq = lsn): LogEntry => ({ lsn, producer: "p", seq, records: JSON.stringify([["a", 100, 1]]) });

const count = async (host: ReplicaHost) => {
  const reply = await host.readResults(1, { key: "a" });
  if (reply.status !== "ok") throw new Error(`refused: ${reply.status}`);
  return reply.results.reduce((n, r) => n + (Number(r.values.n ?? 0)), 0);
};

describe("primary", () => {
  it("assigns consecutive LSNs and dedups a resent (producer, seq)", async () => {
    const { host } = replica("primary", false);
    expect(await host.write(batch(1))).toEqual({ status: "ok", results: [{ status: "applied", lsn: 1, replicated: false, late: 0 }] });
    expect(await host.write({ epoch: 1, batches: [one(2), one(1), one(2)] })).toEqual({
      status: "ok",
      results: [
        { status: "applied", lsn: 2, replicated: false, late: 0 },
        { status: "duplicate", lsn: 2, replicated: false },
        { status: "duplicate", lsn: 2, replicated: false },
      ],
    });
    expect(await count(host)).toBe(2);
  });

  it("answers a write only once the standby holds it, and applies only then (stable prefix)", async () => {
    const { host, forwards } = replica("primary");
    let answered = false;
    const reply = host.write(batch(1)).then((r) => ((answered = true), r));
    await flushed();
    expect(answered).toBe(false);
    expect(await count(host)).toBe(0);
    expect(forwards.held.map((f) => f.msg)).toEqual([{ epoch: 1, entries: [{ lsn: 1, ...one(1) }], upToLsn: 1 }]);
    await forwards.drain();
    expect(await reply).toEqual({ status: "ok", results: [{ status: "applied", lsn: 1, replicated: true, late: 0 }] });
    expect(await count(host)).toBe(1);
    expect(host.status()?.standbyAckLsn).toBe(1);
  });

  it("group-commits: writes arriving while a forward is in flight travel together in the next one", async () => {
    const { host, forwards } = replica("primary");
    const first = host.write(batch(1));
    await flushed();
    const rest = [2, 3, 4].map((seq) => host.write(batch(seq)));
    await flushed();
    expect(forwards.held).toHaveLength(1);
    forwards.held.splice(0)[0]?.release();
    await flushed();
    expect(forwards.held.map((f) => f.msg.entries.map((e) => e.lsn))).toEqual([[2, 3, 4]]);
    await forwards.drain();
    expect((await Promise.all([first, ...rest])).map((r) => r.status === "ok" && r.results[0]?.status)).toEqual(["applied", "applied", "applied", "applied"]);
    expect(await count(host)).toBe(4);
  });

  it("makes a resent batch still pending wait for its entry, never answering early", async () => {
    const { host, forwards } = replica("primary");
    const original = host.write(batch(7));
    await flushed();
    let resentAnswered = false;
    const resent = host.write(batch(7)).then((r) => ((resentAnswered = true), r));
    await flushed();
    expect(resentAnswered).toBe(false);
    await forwards.drain();
    expect(await resent).toEqual({ status: "ok", results: [{ status: "duplicate", lsn: 1, replicated: true }] });
    expect(await original).toMatchObject({ results: [{ status: "applied", lsn: 1 }] });
  });

  it("fails the waiting writes when a forward fails; their entries go in the next forward", async () => {
    const { host, forwards } = replica("primary");
    const failed = host.write(batch(1));
    await flushed();
    await forwards.drain(true);
    expect(await failed).toMatchObject({ results: [{ status: "unconfirmed", reason: "standby down" }] });
    expect(await count(host)).toBe(0);
    const next = host.write(batch(2));
    await flushed();
    expect(forwards.held.map((f) => f.msg.entries.map((e) => e.lsn))).toEqual([[1, 2]]);
    await forwards.drain();
    expect(await next).toMatchObject({ results: [{ status: "applied", lsn: 2, replicated: true }] });
    expect(await count(host)).toBe(2);
  });

  it("sends a round again at the new epoch when the primary moved to one while the round was in flight", async () => {
    const { host, forwards } = replica("primary");
    const write = host.write(batch(1));
    await flushed();
    expect(forwards.held.map((f) => f.msg.epoch)).toEqual([1]);
    // The monitor moves both replicas to epoch 2 (the standby first, so it refuses the round sent at 1).
    host.init({ name: "r-primary", dataflowId: "df", partition: 0, spec: spec(), role: "primary", epoch: 2, hasStandby: true, standby: "r-standby", version: 2, create: true });
    forwards.answer = (msg) => (msg.epoch < 2 ? { status: "stale", epoch: 2 } : { status: "ok", lsn: msg.upToLsn });
    const flush = host.flush(2);
    const sent: number[] = [];
    for (let i = 0; i < 10 && forwards.held.length > 0; i++) {
      for (const f of forwards.held.splice(0)) (sent.push(f.msg.epoch), f.release());
      await flushed();
    }
    expect(sent).toEqual([1, 2]);
    expect(await write).toMatchObject({ results: [{ status: "applied", lsn: 1, replicated: true }] });
    expect(await flush).toEqual({ status: "ok", lsn: 1 });
    expect(await host.readResults(2, { key: "a" })).toMatchObject({ status: "ok", results: [{ values: { n: 1 } }] });
  });

  it("fails the round's waiters when the newer epoch took the primary's role away", async () => {
    const { host, forwards } = replica("primary");
    const write = host.write(batch(1));
    await flushed();
    host.init({ name: "r-primary", dataflowId: "df", partition: 0, spec: spec(), role: "standby", epoch: 2, hasStandby: false, standby: null, version: 2, create: true });
    forwards.answer = () => ({ status: "stale", epoch: 2 });
    await forwards.drain();
    expect(forwards.held).toEqual([]);
    expect(await write).toMatchObject({ results: [{ status: "unconfirmed" }] });
  });

  it("resends from the standby's LSN when it answers with a gap", async () => {
    const { host, forwards } = replica("primary");
    const standby = replica("standby").host;
    forwards.answer = (msg) => standby.replicate(msg);
    await forwards.drain();
    const writes = [host.write(batch(1)), host.write(batch(2))];
    await forwards.drain();
    await Promise.all(writes);
    standby.forget();
    standby.storage.wipe();
    standby.init({ name: "r-standby", dataflowId: "df", partition: 0, spec: spec(), role: "standby", epoch: 1, hasStandby: false, version: 1, create: true });
    const third = host.write(batch(3));
    await forwards.drain();
    expect(await third).toMatchObject({ results: [{ status: "applied", lsn: 3, replicated: true }] });
    expect(standby.status()).toMatchObject({ lsn: 3, appliedLsn: 3 });
  });

  it("splits what is pending into forwards of at most 4M characters", async () => {
    const { host, forwards } = replica("primary");
    const big = (seq: number) => ({ producer: "p", seq, records: JSON.stringify([["a", 1, "x".repeat(3_000_000)]]) });
    const first = host.write({ epoch: 1, batches: [one(1)] });
    await flushed();
    const rest = host.write({ epoch: 1, batches: [big(2), big(3)] });
    const sent: number[][] = [];
    for (let i = 0; i < 10 && forwards.held.length > 0; i++) {
      for (const f of forwards.held.splice(0)) {
        sent.push(f.msg.entries.map((e) => e.lsn));
        f.release();
      }
      await flushed();
    }
    expect(sent).toEqual([[1], [2], [3]]);
    expect(forwards.held).toEqual([]);
    await Promise.all([first, rest]);
    expect(host.status()).toMatchObject({ lsn: 3, appliedLsn: 3, standbyAckLsn: 3 });
  });

  it("cannot get a write acknowledged through a standby of another epoch (fencing)", async () => {
    const { host, forwards } = replica("primary");
    forwards.answer = () => ({ status: "stale", epoch: 2 });
    const write = host.write(batch(1));
    await forwards.drain();
    expect(await write).toMatchObject({ results: [{ status: "unconfirmed" }] });
    expect(await count(host)).toBe(0);
  });

  it("makes pending entries stable when the standby is dropped (degraded), answering their writes", async () => {
    const { host } = replica("primary");
    const write = host.write(batch(1));
    await flushed();
    host.init({ name: "r-primary", dataflowId: "df", partition: 0, spec: spec(), role: "primary", epoch: 2, hasStandby: false, standby: null, version: 2 });
    expect(await write).toEqual({ status: "ok", results: [{ status: "applied", lsn: 1, replicated: false, late: 0 }] });
  });

  it("refuses a stale epoch, a newer unknown epoch and a standby-only call", async () => {
    const { host } = replica("primary");
    host.init({ name: "r-primary", dataflowId: "df", partition: 0, spec: spec(), role: "primary", epoch: 3, hasStandby: true, standby: "r-standby", version: 1 });
    expect(await host.write({ ...batch(1), epoch: 2 })).toEqual({ status: "stale", epoch: 3 });
    expect(await host.write({ ...batch(1), epoch: 4 })).toEqual({ status: "behind", epoch: 3 });
    expect(host.replicate({ epoch: 3, entries: [], upToLsn: 0 })).toEqual({ status: "wrong-role", role: "primary" });
    expect(await host.readResults(2, {})).toEqual({ status: "stale", epoch: 3 });
    expect(host.init({ name: "r-primary", dataflowId: "df", partition: 0, spec: spec(), role: "primary", epoch: 2, hasStandby: true, version: 1 })).toEqual({
      status: "stale",
      epoch: 3,
    });
  });

  it("answers too-old for a seq below the dedup window instead of guessing", async () => {
    const { host } = replica("primary", false);
    await host.write(batch(1));
    await host.write(batch(1 + tuning.dedupWindow + 5));
    expect(await host.write(batch(1))).toEqual({ status: "ok", results: [{ status: "too-old", high: 1 + tuning.dedupWindow + 5 }] });
    expect(await host.write(batch(2))).toEqual({ status: "ok", results: [{ status: "too-old", high: 1 + tuning.dedupWindow + 5 }] });
    expect(await host.write(batch(10))).toMatchObject({ results: [{ status: "applied" }] });
  });
});

describe("standby", () => {
  it("applies strictly in LSN order and reports a gap instead of skipping", () => {
    const { host } = replica("standby");
    expect(host.replicate({ epoch: 1, entries: [entry(2)], upToLsn: 2 })).toEqual({ status: "gap", lsn: 0 });
    expect(host.status()).toMatchObject({ lsn: 0, appliedLsn: 0 });
    expect(host.replicate({ epoch: 1, entries: [entry(2), entry(1)], upToLsn: 2 })).toEqual({ status: "ok", lsn: 2 });
    expect(host.replicate({ epoch: 1, entries: [entry(1), entry(2)], upToLsn: 2 })).toEqual({ status: "ok", lsn: 2 });
    expect(host.status()).toMatchObject({ lsn: 2, appliedLsn: 2 });
  });

  it("fills a gap from the primary's log", async () => {
    const primary = replica("primary");
    const standby = replica("standby");
    // Forwards are held, so the entries stay pending in the primary's log.
    for (let seq = 1; seq <= 5; seq++) void primary.host.write(batch(seq));
    await flushed();
    expect(standby.host.replicate({ epoch: 1, entries: [entry(5)], upToLsn: 5 })).toEqual({ status: "gap", lsn: 0 });
    const missing = primary.host.readLog(1, 1, 5);
    if (!Array.isArray(missing)) throw new Error("readLog refused");
    expect(missing.map((e) => e.lsn)).toEqual([1, 2, 3, 4, 5]);
    expect(standby.host.replicate({ epoch: 1, entries: missing, upToLsn: 5 })).toEqual({ status: "ok", lsn: 5 });
  });
});

describe("durability", () => {
  it("restarts from checkpoint plus log to the same state, pending entries included", async () => {
    const storage = new MemoryReplicaStorage();
    const first = replica("primary", true, storage);
    for (let seq = 1; seq <= 8; seq++) void first.host.write(batch(seq, `k${seq % 3}`, seq * 400, seq));
    await flushed();
    // The standby acknowledges LSN 6 of 8.
    first.forwards.answer = () => ({ status: "ok", lsn: 6 });
    first.forwards.held.splice(0)[0]?.release();
    await flushed();
    const before = await first.host.readResults(1, {});
    expect(storage.checkpoint).not.toBeNull();
    const forwards = new HeldForwards();
    const restarted = new ReplicaHost(storage, tuning, forwards);
    // The load forwards the pending entries again; a read waits for that (here it fails: the standby is down).
    const read = restarted.readResults(1, {});
    await forwards.drain(true);
    expect(await read).toEqual(before);
    // The same progress; the count of records applied (load since the replica was loaded) starts again.
    expect(restarted.status()).toEqual({ ...first.host.status(), recordsApplied: 0 });
    expect(first.host.status()?.recordsApplied).toBe(6);
    const resent = restarted.write(batch(8));
    await forwards.drain();
    expect(await resent).toEqual({ status: "ok", results: [{ status: "duplicate", lsn: 8, replicated: true }] });
    first.forwards.answer = (msg) => ({ status: "ok", lsn: msg.upToLsn });
    await first.forwards.drain();
    expect(await restarted.readResults(1, {})).toEqual(await first.host.readResults(1, {}));
  });

  it("trims the log only behind both the checkpoint and the standby's acknowledgement", async () => {
    const { host, storage, forwards } = replica("primary");
    let trimmed = false;
    for (let seq = 1; seq <= 40; seq++) {
      void host.write(batch(seq, `k${seq}`, seq * 10, seq));
      await flushed();
      // The standby acknowledges every other batch, one behind.
      if (seq % 2 === 0) {
        forwards.answer = () => ({ status: "ok", lsn: seq - 1 });
        for (const f of forwards.held.splice(0)) f.release();
        await flushed();
      }
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

  it("spaces checkpoints so their cost stays proportional to the log written", async () => {
    const { host, storage } = replica("primary", false);
    let checkpoints = 0;
    let last = storage.meta?.checkpointLsn;
    for (let seq = 1; seq <= 60; seq++) {
      await host.write(batch(seq, `key-${seq}`, 100, 1));
      if (storage.meta?.checkpointLsn !== last) {
        checkpoints += 1;
        last = storage.meta?.checkpointLsn;
      }
    }
    // Every key is new, so the state grows with each batch while each batch adds a little log:
    // a fixed "every 3 batches" would write 20 checkpoints.
    expect(checkpoints).toBeGreaterThan(1);
    expect(checkpoints).toBeLessThan(10);
  });

  it("takes a checkpoint after checkpointLogChars of log even before checkpointEvery batches", async () => {
    const checkpointsAfter = async (checkpointLogChars: number) => {
      const storage = new MemoryReplicaStorage();
      const host = new ReplicaHost(storage, { dedupWindow: 64, checkpointEvery: 1000, checkpointLogChars }, new HeldForwards());
      host.init({ name: "r-primary", dataflowId: "df", partition: 0, spec: spec(), role: "primary", epoch: 1, hasStandby: false, standby: null, version: 1, create: true });
      const lsns = new Set<number>();
      // The same key again and again: the state stays small while each batch adds about 480 characters of log.
      for (let seq = 1; seq <= 30; seq++) {
        await host.write({ epoch: 1, batches: [{ producer: "p", seq, records: JSON.stringify(Array.from({ length: 40 }, () => ["k", 100, 1])) }] });
        if (storage.meta && storage.meta.checkpointLsn > 0) lsns.add(storage.meta.checkpointLsn);
      }
      return [...lsns];
    };
    expect(await checkpointsAfter(4_000_000)).toEqual([]);
    // 4,000 characters of log come after 9 batches, so checkpoints follow long before 1,000 batches.
    const taken = await checkpointsAfter(4_000);
    expect(taken.length).toBeGreaterThan(1);
    expect(taken[0]).toBeLessThan(15);
  });

  it("forgets memory that ran ahead of a failed write and reloads what is durable", async () => {
    const { host, storage } = replica("primary", false);
    await host.write(batch(1));
    storage.failNextPersist = true;
    await expect(host.write(batch(2))).rejects.toThrow(/injected/);
    expect(host.status()?.lsn).toBe(1);
    expect(await host.write(batch(2))).toMatchObject({ results: [{ status: "applied", lsn: 2 }] });
  });
});
