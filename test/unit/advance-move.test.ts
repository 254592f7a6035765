/**
 * The monitor's side of a key-group move (issue 28, `shared/moves/advance-move.ts`), over
 * in-memory replica pairs: the phases in order, routing switched with both epochs raised,
 * a monitor that forgot what the release took, a takeover on the source between release
 * and adopt, and a target that became unavailable (the move is given up and the source
 * holds its groups again). Counts stay exact throughout.
 */
import { describe, expect, it } from "vitest";
import { advanceMove, type MoveDriver, type MovePort, type ReleasedMemo } from "../../shared/moves/advance-move.ts";
import type { MoveStep } from "../../shared/keygroups/move-entries.ts";
import { carryOutMoveStep } from "../../shared/moves/move-step.ts";
import { keyGroupMapOf, keyGroupOf, partitionOfKey } from "../../shared/keygroups/key-groups.ts";
import { desiredConfigs } from "../../shared/monitor/desired-config.ts";
import type { ForwardPort } from "../../shared/replica/forwarder.ts";
import { ReplicaHost } from "../../shared/replica/replica-host.ts";
import type { Replicate, ReplicateReply, WriteReply } from "../../shared/wire/replica-rpc.ts";
import type { DataflowRecord } from "../../shared/wire/routing.ts";
import { MemoryReplicaStorage } from "../helpers/memory-replica-storage.ts";
import { record as storedRecord, spec } from "../helpers/fixtures.ts";

const tuning = { dedupWindow: 64, checkpointEvery: 3 };

/** A driver at time `atMs` whose switch tells no replica its new epoch (the tests reconcile by hand, as a later tick would). */
const driver = (port: MovePort, memo: ReleasedMemo, atMs: number, save: () => Promise<void>): MoveDriver => ({ port, memo, now: () => atMs, save, reconfigure: async () => {}, answered: () => true });

/** A dataflow of two partitions on in-memory replicas, with a router's and a monitor's view of it. */
function world() {
  const record = storedRecord("df", spec({ partitions: 2 }));
  const hosts = new Map<string, ReplicaHost>();
  const down = new Set<string>();
  const forwardPort: ForwardPort = {
    replicate(standby: string, msg: Replicate): Promise<ReplicateReply> {
      const host = hosts.get(standby);
      return !host || down.has(standby) ? Promise.reject(new Error(`${standby} down`)) : Promise.resolve(host.replicate(msg));
    },
  };
  for (const route of record.routes) for (const name of [route.primary, route.standby]) if (name) hosts.set(name, new ReplicaHost(new MemoryReplicaStorage(), tuning, forwardPort));
  const host = (name: string): ReplicaHost => {
    const h = hosts.get(name);
    if (!h || down.has(name)) throw new Error(`${name} does not answer`);
    return h;
  };
  /** The monitor's reconciliation: every replica told what its route says. */
  const reconcile = () => {
    for (const route of record.routes) for (const desired of desiredConfigs(record, route)) if (!down.has(desired.name)) hosts.get(desired.name)?.init({ ...desired, create: true });
  };
  reconcile();
  const port: MovePort = { moveStep: (name, msg) => carryOutMoveStep(host(name), msg, tuning) };
  /** A router: splits a batch by the record's key groups; true when every part was applied or a duplicate. */
  const send = async (seq: number, keys: readonly string[]): Promise<WriteReply[]> => {
    const map = keyGroupMapOf(record);
    const parts = new Map<number, string[]>();
    for (const key of keys) parts.set(partitionOfKey(map, key), [...(parts.get(partitionOfKey(map, key)) ?? []), key]);
    return Promise.all(
      [...parts].map(([partition, part]) => {
        const route = record.routes[partition];
        if (!route) throw new Error("no route");
        return host(route.primary).write({ epoch: route.epoch, batches: [{ producer: "p", seq, records: JSON.stringify(part.map((k) => [k, 100, 1])) }] });
      }),
    );
  };
  /** Open counts by key over the partitions' primaries (and, to compare, their standbys). */
  const counts = (which: "primary" | "standby"): Record<string, number> => {
    const all: Record<string, number> = {};
    for (const route of record.routes) {
      const name = which === "primary" ? route.primary : route.standby;
      for (const r of (name ? hosts.get(name)?.load()?.operator.openResults({}) : []) ?? []) all[r.key] = (all[r.key] ?? 0) + (r.values.n as number);
    }
    return all;
  };
  return { record, hosts, down, reconcile, port, send, counts };
}

const G = 5;
const groups = (record: DataflowRecord) => keyGroupMapOf(record).groups;
const keyOf = (record: DataflowRecord, match: (group: number) => boolean): string => {
  for (let i = 0; ; i++) if (match(keyGroupOf(`k${i}`, groups(record)))) return `k${i}`;
};

/** Starts a move of group G to the partition that does not own it. */
function startMove(record: DataflowRecord) {
  const from = partitionOfKey(keyGroupMapOf(record), keyOf(record, (g) => g === G));
  const move = { id: record.nextMove++, groups: [G], from, to: 1 - from, phase: "release" as const, startedAtMs: 0, releasedAtMs: null, switchedAtMs: null, failure: null };
  record.moves.push(move);
  return record.moves[record.moves.length - 1] ?? move;
}

/** A world where batch 1 put a key of group G on its partition, and a move of G has started. */
async function movingG() {
  const w = world();
  const moved = keyOf(w.record, (g) => g === G);
  await w.send(1, [moved]);
  const move = startMove(w.record);
  const source = w.record.routes[move.from];
  const target = w.record.routes[move.to];
  if (!source || !target) throw new Error("routes");
  return { w, moved, move, source, target };
}

/** `port`, except that the answers to steps of `kind` are lost after the step was carried out. */
const losing = (port: MovePort, kind: MoveStep["kind"]): MovePort => ({
  async moveStep(name, msg) {
    const reply = await port.moveStep(name, msg);
    if (msg.step.kind === kind) throw new Error("answer lost");
    return reply;
  },
});

const statuses = (replies: readonly WriteReply[]) => replies.map((r) => (r.status === "ok" ? r.results.map((o) => o.status).join(",") : r.status));

describe("advancing a key-group move", () => {
  it("ends in one call when the switch tells both pairs their new epoch, stamping how long the records waited", async () => {
    const w = world();
    const move = startMove(w.record);
    let at = 100;
    const told: number[][] = [];
    const reconfigure = async (routes: readonly { partition: number }[]) => {
      told.push(routes.map((r) => r.partition));
      w.reconcile();
    };
    const timed: MoveDriver = { port: w.port, memo: new Map(), now: () => (at += 7), save: async () => {}, reconfigure, answered: () => true };
    expect(await advanceMove(w.record, move, timed)).toEqual({ state: "finished" });
    expect(told).toEqual([[move.from, move.to]]);
    expect(move).toMatchObject({ releasedAtMs: 107, switchedAtMs: 114 });
  });

  it("releases, adopts, switches routing with both epochs raised, then forgets; nothing lost or counted twice", async () => {
    const w = world();
    const moved = keyOf(w.record, (g) => g === G);
    // Batch 1 reaches only the source: the target never saw it, so only the memory moved with the group can tell it was applied.
    const beside = keyOf(w.record, (g) => g !== G && g % 2 === G % 2);
    const across = keyOf(w.record, (g) => g % 2 !== G % 2);
    await w.send(1, [moved, beside]);
    const move = startMove(w.record);
    const epochs = w.record.routes.map((r) => r.epoch);
    let saves = 0;
    const memo: ReleasedMemo = new Map();
    // The switch is saved, then forget waits for the replicas to hold the new epoch.
    expect(await advanceMove(w.record, move, driver(w.port, memo, 10, async () => void saves++))).toMatchObject({ state: "waiting", why: expect.stringMatching(/^forget on .*: behind$/) });
    expect(w.record.keyGroups?.owners?.[G]).toBe(move.to);
    expect(w.record.routes.map((r) => r.epoch)).toEqual(epochs.map((e) => e + 1));
    expect(move).toMatchObject({ phase: "forget", releasedAtMs: 10, switchedAtMs: 10 });
    w.reconcile();
    expect(await advanceMove(w.record, move, driver(w.port, memo, 20, async () => void saves++))).toEqual({ state: "finished" });
    expect(w.record.moves).toEqual([]);
    expect(saves).toBe(4);
    // Batch 1 resent under the new routing: every part a duplicate. Batch 2 applied once.
    expect(statuses(await w.send(1, [moved, beside]))).toEqual(["duplicate", "duplicate"]);
    expect(statuses(await w.send(2, [moved, beside, across]))).toEqual(["applied", "applied"]);
    const expected = { [moved]: 2, [beside]: 2, [across]: 1 };
    expect(w.counts("primary")).toEqual(expected);
    expect(w.counts("standby")).toEqual(expected);
  });

  it("once the adopt may have been applied, waits for an unavailable target rather than leave the groups on both pairs", async () => {
    const { w, move, target } = await movingG();
    // The target applies the adopt, but its answer is lost; then its pair becomes unavailable.
    const memo: ReleasedMemo = new Map();
    expect(await advanceMove(w.record, move, driver(losing(w.port, "adopt"), memo, 0, async () => {}))).toMatchObject({ state: "waiting", why: expect.stringMatching(/^adopt on .*answer lost$/) });
    target.status = "unavailable";
    w.down.add(target.primary);
    expect(await advanceMove(w.record, move, driver(w.port, memo, 1, async () => {}))).toMatchObject({ state: "waiting", why: expect.stringMatching(/^adopt on /) });
    expect(move.phase).toBe("adopt");
    // Back: the repeated adopt is answered from what was applied, and the move goes on.
    target.status = "degraded";
    w.down.delete(target.primary);
    expect(await advanceMove(w.record, move, driver(w.port, memo, 2, async () => {}))).toMatchObject({ state: "waiting", why: expect.stringMatching(/^forget on .*: behind$/) });
    w.reconcile();
    expect(await advanceMove(w.record, move, driver(w.port, memo, 3, async () => {}))).toEqual({ state: "finished" });
  });

  it("goes on after a monitor restart and a takeover on the source between release and adopt", async () => {
    const { w, moved, move, source, target } = await movingG();
    if (!source.standby) throw new Error("the source has no standby");
    // The target's primary does not answer: the move waits in adopt.
    w.down.add(target.primary);
    const first = await advanceMove(w.record, move, driver(w.port, new Map(), 0, async () => {}));
    expect(first).toMatchObject({ state: "waiting", why: expect.stringMatching(/^adopt on /) });
    // The record says the batch's group is released: a write of it waits.
    expect(statuses(await w.send(2, [moved]))).toEqual(["blocked"]);
    w.down.delete(target.primary);
    // The source's primary fails; its standby takes over (it applied the release too).
    w.down.add(source.primary);
    source.primary = source.standby;
    source.standby = null;
    source.epoch += 1;
    source.version += 1;
    source.status = "degraded";
    w.reconcile();
    // A restarted monitor remembers nothing of the release: it asks the new primary again.
    const memo: ReleasedMemo = new Map();
    await advanceMove(w.record, move, driver(w.port, memo, 5, async () => {}));
    w.reconcile();
    expect(await advanceMove(w.record, move, driver(w.port, memo, 6, async () => {}))).toEqual({ state: "finished" });
    expect(statuses(await w.send(1, [moved]))).toEqual(["duplicate"]);
    expect(statuses(await w.send(2, [moved]))).toEqual(["applied"]);
    expect(w.counts("primary")).toEqual({ [moved]: 2 });
  });

  it("gives the move up when the target becomes unavailable before the adopt was sent: the source holds the group again", async () => {
    const { w, moved, move, target } = await movingG();
    // The source applies the release, but its answer is lost: the move stays in phase release.
    expect(await advanceMove(w.record, move, driver(losing(w.port, "release"), new Map(), 0, async () => {}))).toMatchObject({ state: "waiting", why: expect.stringMatching(/answer lost$/) });
    expect(statuses(await w.send(2, [moved]))).toEqual(["blocked"]);
    target.status = "unavailable";
    expect(await advanceMove(w.record, move, driver(w.port, new Map(), 1, async () => {}))).toEqual({ state: "given-up", why: `partition ${move.to} became unavailable before the move finished` });
    expect(w.record.moves).toEqual([]);
    expect(w.record.keyGroups?.owners).toBeNull();
    expect(statuses(await w.send(1, [moved]))).toEqual(["duplicate"]);
    expect(statuses(await w.send(2, [moved]))).toEqual(["applied"]);
    expect(w.counts("primary")).toEqual({ [moved]: 2 });
    expect(w.counts("standby")).toEqual({ [moved]: 2 });
  });
});
