/** A standby holds forwarded entries and applies them together (issue 12: its CPU per event), never losing one. */
import { describe, expect, it } from "vitest";
import { ReplicaHost } from "../../shared/replica/replica-host.ts";
import type { InitReplica } from "../../shared/wire/replica-rpc.ts";
import type { LogEntry } from "../../shared/wire/persisted.ts";
import { MemoryReplicaStorage } from "../helpers/memory-replica-storage.ts";
import { spec } from "../helpers/fixtures.ts";

const tuning = { dedupWindow: 64, checkpointEvery: 100, standbyApplyEntries: 3 };
const noForwards = { replicate: () => Promise.reject(new Error("no standby in these tests")) };

const config = (overrides: Partial<InitReplica> = {}): InitReplica => ({
  name: "r-standby",
  dataflowId: "df",
  partition: 0,
  spec: spec(),
  role: "standby",
  epoch: 1,
  hasStandby: false,
  version: 1,
  create: true,
  ...overrides,
});

function standby(storage = new MemoryReplicaStorage()) {
  const host = new ReplicaHost(storage, tuning, noForwards);
  host.init(config());
  return { host, storage };
}

const entry = (lsn: number, ts = 100, records = JSON.stringify([["a", ts, 1]])): LogEntry => ({ lsn, producer: "p", seq: lsn, records });
const replicate = (host: ReplicaHost, ...entries: LogEntry[]) => host.replicate({ epoch: 1, entries, upToLsn: entries.at(-1)?.lsn ?? 0 });

async function countOf(host: ReplicaHost, epoch: number): Promise<number> {
  const reply = await host.readResults(epoch, { key: "a" });
  if (reply.status !== "ok") throw new Error(`refused: ${reply.status}`);
  return reply.results.reduce((n, r) => n + Number(r.values.n ?? 0), 0);
}

describe("standby holding entries", () => {
  it("logs each forward at once and applies the entries together once it holds standbyApplyEntries", () => {
    const { host, storage } = standby();
    expect(replicate(host, entry(1))).toEqual({ status: "ok", lsn: 1 });
    expect(replicate(host, entry(2))).toEqual({ status: "ok", lsn: 2 });
    expect(host.status()).toMatchObject({ lsn: 2, appliedLsn: 0 });
    expect([...storage.log.keys()]).toEqual([1, 2]);
    replicate(host, entry(3));
    expect(host.status()).toMatchObject({ lsn: 3, appliedLsn: 3 });
  });

  it("applies at once when the records it holds reach a million characters", () => {
    const { host } = standby();
    const big = (lsn: number) => entry(lsn, 100, JSON.stringify([["a", 100, "x".repeat(600_000)]]));
    replicate(host, big(1));
    expect(host.status()).toMatchObject({ appliedLsn: 0 });
    replicate(host, big(2));
    expect(host.status()).toMatchObject({ appliedLsn: 2 });
  });

  it("applies what it holds at a probe, so an idle standby catches up", () => {
    const { host } = standby();
    replicate(host, entry(1), entry(2));
    expect(host.probe()).toMatchObject({ lsn: 2, appliedLsn: 2 });
  });

  it("applies what it holds before a new configuration: promoted beside a fresh standby, it counts every entry it held", async () => {
    const { host } = standby();
    replicate(host, entry(1), entry(2));
    // Held entries are stable (both replicas logged them): they must not wait for the new standby's acknowledgement.
    expect(host.init(config({ role: "primary", epoch: 2, version: 2, hasStandby: true, standby: "r-fresh" }))).toEqual({ status: "ok" });
    expect(host.status()).toMatchObject({ role: "primary", lsn: 2, appliedLsn: 2 });
    expect(await countOf(host, 2)).toBe(2);
  });

  it("after a restart, holds what it had not applied and stores the outputs those entries emit once applied", () => {
    const { host, storage } = standby();
    // A record at 5,000 s closes the window of the records at 100 ms: one output.
    replicate(host, entry(1), entry(2, 5_000_000));
    expect(storage.outputs).toEqual([]);
    const restarted = new ReplicaHost(storage, tuning, noForwards);
    expect(restarted.status()).toMatchObject({ lsn: 2, appliedLsn: 0 });
    expect(restarted.probe()).toMatchObject({ lsn: 2, appliedLsn: 2, outputSeq: 1 });
    expect(storage.outputs.map((o) => [o.outputSeq, o.result.key, o.result.values.n])).toEqual([[1, "a", 1]]);
  });
});
