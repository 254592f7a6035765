/**
 * A key-group move carried out by its log entries on two replica pairs (issue 28,
 * `shared/moves/move-step.ts`): the source releases a group (its standby too), refuses its
 * records, the target adopts it with the memory that judged it, and a resend of a batch
 * the source applied is not counted twice. Steps are idempotent, contradictions refused,
 * and what a move left survives a checkpoint and a restart.
 */
import { describe, expect, it } from "vitest";
import type { ForwardPort } from "../../shared/replica/forwarder.ts";
import { ReplicaHost } from "../../shared/replica/replica-host.ts";
import { carryOutMoveStep, type MoveStepReply } from "../../shared/moves/move-step.ts";
import { keyGroupOf } from "../../shared/keygroups/key-groups.ts";
import type { MoveStep } from "../../shared/keygroups/move-entries.ts";
import type { Replicate, ReplicateReply } from "../../shared/wire/replica-rpc.ts";
import { MemoryReplicaStorage } from "../helpers/memory-replica-storage.ts";
import { spec } from "../helpers/fixtures.ts";

const tuning = { dedupWindow: 64, checkpointEvery: 3 };
const GROUPS = 256;

/** Forwards straight to the standby host. */
class Linked implements ForwardPort {
  standby: ReplicaHost | null = null;
  replicate(_standby: string, msg: Replicate): Promise<ReplicateReply> {
    if (!this.standby) return Promise.reject(new Error("standby down"));
    return Promise.resolve(this.standby.replicate(msg));
  }
}

/** A pair for `partition`: primary and standby hosts over memory. */
function pair(partition: number) {
  const link = new Linked();
  const storage = new MemoryReplicaStorage();
  const primary = new ReplicaHost(storage, tuning, link);
  const standbyStorage = new MemoryReplicaStorage();
  const standby = new ReplicaHost(standbyStorage, tuning, new Linked());
  const base = { dataflowId: "df", partition, spec: spec(), epoch: 1, version: 1, create: true };
  primary.init({ ...base, name: `p${partition}-a`, role: "primary", hasStandby: true, standby: `p${partition}-b` });
  standby.init({ ...base, name: `p${partition}-b`, role: "standby", hasStandby: false });
  link.standby = standby;
  return { primary, standby, storage, standbyStorage, link };
}

/** Keys of group `group` and of other groups. */
const keyIn = (group: number, not = false): string => {
  for (let i = 0; ; i++) if ((keyGroupOf(`k${i}`, GROUPS) === group) !== not) return `k${i}`;
};
const G = 7;
const moved = keyIn(G);
const stays = keyIn(G, true);

const write = (host: ReplicaHost, seq: number, keys: readonly string[], producer = "p") =>
  host.write({ epoch: 1, batches: [{ producer, seq, records: JSON.stringify(keys.map((k) => [k, 100, 1])) }] });

/** Open counts by key, as the replica's operator holds them (a standby serves no reads). */
async function counts(host: ReplicaHost): Promise<Record<string, number>> {
  await Promise.resolve();
  const results = host.load()?.operator.openResults({}) ?? [];
  return Object.fromEntries(results.map((r) => [r.key, r.values.n as number]));
}

const step = (host: ReplicaHost, s: MoveStep): Promise<MoveStepReply> => carryOutMoveStep(host, { epoch: 1, step: s }, tuning);

describe("a key-group move through the log", () => {
  it("moves a group's state and dedup memory; the source refuses its records meanwhile; nothing counts twice", async () => {
    const a = pair(0);
    const b = pair(1);
    // Batch 1 of producer p: A gets its part (both keys are A's); B has another producer's batch.
    await write(a.primary, 1, [moved, stays]);
    await write(b.primary, 1, ["b-own"], "q");
    const released = await step(a.primary, { kind: "release", move: 1, of: GROUPS, groups: [G] });
    if (released.status !== "ok" || !released.released) throw new Error(`release: ${JSON.stringify(released)}`);
    expect(await counts(a.primary)).toEqual({ [stays]: 1 });
    expect(await counts(a.standby)).toEqual({ [stays]: 1 });
    // The source refuses the group's records, and logs nothing of such a write.
    expect(await write(a.primary, 2, [stays, moved])).toEqual({ status: "ok", results: [{ status: "blocked", reason: `key group ${G} is moving to another partition`, until: "routing sends the group to its new partition" }] });
    expect(a.primary.status()?.lsn).toBe(2);
    // A coalesced write (several clients' batches) waits only for the batch holding the moving group.
    const coalesced = a.primary.write({
      epoch: 1,
      batches: [
        { producer: "p", seq: 3, records: JSON.stringify([[moved, 100, 1]]) },
        { producer: "r", seq: 1, records: JSON.stringify([[stays, 100, 1]]) },
      ],
    });
    expect(await coalesced).toMatchObject({ status: "ok", results: [{ status: "blocked" }, { status: "applied" }] });
    expect(a.primary.status()?.lsn).toBe(3);
    const adopt = { kind: "adopt" as const, move: 1, of: GROUPS, groups: [G], ...released.released };
    expect(await step(b.primary, adopt)).toEqual({ status: "ok", released: null });
    expect(await counts(b.primary)).toEqual({ "b-own": 1, [moved]: 1 });
    expect(await counts(b.standby)).toEqual({ "b-own": 1, [moved]: 1 });
    // Routing now sends the group to B. Batch 1 resent: its part for the moved group was applied at A.
    expect(await write(b.primary, 1, [moved])).toMatchObject({ status: "ok", results: [{ status: "duplicate" }] });
    // Batch 2 (refused at A) resent to B and A by the new routing: applied once each.
    expect(await write(b.primary, 2, [moved])).toMatchObject({ status: "ok", results: [{ status: "applied" }] });
    expect(await step(a.primary, { kind: "forget", move: 1 })).toEqual({ status: "ok", released: null });
    expect(await write(a.primary, 2, [stays])).toMatchObject({ status: "ok", results: [{ status: "applied" }] });
    expect(await counts(b.primary)).toEqual({ "b-own": 1, [moved]: 2 });
    expect(await counts(a.primary)).toEqual({ [stays]: 3 });
    expect(b.standby.status()?.appliedLsn).toBe(b.primary.status()?.appliedLsn);
  });

  it("a resent batch whose part for the moved group failed at the source is applied for that group only", async () => {
    const a = pair(0);
    const b = pair(1);
    // Batch 1's part at B applies; its part at A (the moved group) never arrived.
    await write(b.primary, 1, ["b-own"]);
    const released = await step(a.primary, { kind: "release", move: 1, of: GROUPS, groups: [G] });
    if (released.status !== "ok" || !released.released) throw new Error("release");
    await step(b.primary, { kind: "adopt", move: 1, of: GROUPS, groups: [G], ...released.released });
    // The resend reaches B whole: B's own part is a duplicate, the moved group's is new.
    expect(await write(b.primary, 1, ["b-own", moved])).toMatchObject({ status: "ok", results: [{ status: "applied" }] });
    expect(await counts(b.primary)).toEqual({ "b-own": 1, [moved]: 1 });
    expect(await counts(b.standby)).toEqual({ "b-own": 1, [moved]: 1 });
    expect(await write(b.primary, 1, ["b-own", moved])).toMatchObject({ status: "ok", results: [{ status: "duplicate" }] });
  });

  it("a batch the target applied between the adopt and the switch held none of the group's records: resent after the switch, they are applied", async () => {
    const a = pair(0);
    const b = pair(1);
    const released = await step(a.primary, { kind: "release", move: 1, of: GROUPS, groups: [G] });
    if (released.status !== "ok" || !released.released) throw new Error("release");
    await step(b.primary, { kind: "adopt", move: 1, of: GROUPS, groups: [G], ...released.released });
    // Routing still sends the group to A, which refuses batch 1's part for it; B applies its own part.
    expect(await write(a.primary, 1, [moved])).toMatchObject({ status: "ok", results: [{ status: "blocked" }] });
    expect(await write(b.primary, 1, ["b-own"])).toMatchObject({ status: "ok", results: [{ status: "applied" }] });
    // After the switch the producer resends batch 1, split by the new owners: B gets both parts.
    expect(await write(b.primary, 1, ["b-own", moved])).toMatchObject({ status: "ok", results: [{ status: "applied" }] });
    expect(await counts(b.primary)).toEqual({ "b-own": 1, [moved]: 1 });
    expect(await counts(b.standby)).toEqual({ "b-own": 1, [moved]: 1 });
    expect(await write(b.primary, 1, ["b-own", moved])).toMatchObject({ status: "ok", results: [{ status: "duplicate" }] });
  });

  it("records of a moved-in group are logged though an entry of the same batch, without them, is still pending", async () => {
    const a = pair(0);
    const b = pair(1);
    const released = await step(a.primary, { kind: "release", move: 1, of: GROUPS, groups: [G] });
    if (released.status !== "ok" || !released.released) throw new Error("release");
    await step(b.primary, { kind: "adopt", move: 1, of: GROUPS, groups: [G], ...released.released });
    // B's standby stops answering: batch 1's own part is logged, pending.
    b.link.standby = null;
    const first = write(b.primary, 1, ["b-own"]);
    // After the switch, the resend brings the moved group's records too: they are logged, not folded into the pending entry.
    const second = write(b.primary, 1, ["b-own", moved]);
    expect(b.primary.status()?.lsn).toBe(3);
    b.link.standby = b.standby;
    await Promise.allSettled([first, second]);
    expect(await b.primary.flush(1)).toMatchObject({ status: "ok" });
    expect(await counts(b.primary)).toEqual({ "b-own": 1, [moved]: 1 });
    expect(await counts(b.standby)).toEqual({ "b-own": 1, [moved]: 1 });
  });

  it("repeats are answered without a second entry; contradictions are refused; a return gives the state back", async () => {
    const a = pair(0);
    await write(a.primary, 1, [moved, stays]);
    const release = { kind: "release" as const, move: 3, of: GROUPS, groups: [G] };
    const first = await step(a.primary, release);
    const lsn = a.primary.status()?.lsn;
    expect(await step(a.primary, release)).toEqual(first);
    expect(a.primary.status()?.lsn).toBe(lsn);
    expect(await step(a.primary, { kind: "release", move: 4, of: GROUPS, groups: [G, G + 1] })).toEqual({
      status: "refused",
      reason: `key groups ${G} were released here by a move that is not over`,
    });
    expect(await step(a.primary, { kind: "forget", move: 9 })).toEqual({ status: "refused", reason: "move 9 released nothing here" });
    // What an adopt carries is checked before it is logged: a log entry that cannot be applied would stop the replica for good.
    expect(await step(a.primary, { kind: "adopt", move: 5, of: GROUPS, groups: [9], taken: { open: 1 }, judges: [] })).toEqual({
      status: "refused",
      reason: "what move 5 carries cannot be adopted: window aggregate: malformed moved state",
    });
    expect(await step(a.primary, { kind: "return", move: 3 })).toEqual({ status: "ok", released: null });
    expect(await counts(a.primary)).toEqual({ [moved]: 1, [stays]: 1 });
    expect(await counts(a.standby)).toEqual({ [moved]: 1, [stays]: 1 });
    expect(await write(a.primary, 1, [moved, stays])).toMatchObject({ status: "ok", results: [{ status: "duplicate" }] });
    expect(await write(a.primary, 2, [moved])).toMatchObject({ status: "ok", results: [{ status: "applied" }] });
  });

  it("refuses to move the state of an operator that cannot hand it over", async () => {
    const link = new Linked();
    const host = new ReplicaHost(new MemoryReplicaStorage(), tuning, link);
    // The join (a stage's operator) has no moves yet.
    const join = spec({
      stream: undefined,
      from: ["x", "y"],
      key: "key",
      aggregates: undefined,
      join: { kind: "inner", left: { n: { op: "sum", field: "values.n" } }, right: { m: { op: "sum", field: "values.n" } } },
    });
    host.init({ dataflowId: "dj", partition: 0, spec: join, epoch: 1, version: 1, create: true, name: "dj-a", role: "primary", hasStandby: false });
    expect(await step(host, { kind: "release", move: 1, of: GROUPS, groups: [1] })).toEqual({ status: "refused", reason: "the operator of dataflow 'dj' cannot move keys' state between partitions" });
    expect(host.status()?.lsn).toBe(0);
  });

  it("what a move left survives checkpoints and a restart", async () => {
    const a = pair(0);
    const b = pair(1);
    await write(a.primary, 1, [moved]);
    const released = await step(a.primary, { kind: "release", move: 1, of: GROUPS, groups: [G] });
    if (released.status !== "ok" || !released.released) throw new Error("release");
    await step(b.primary, { kind: "adopt", move: 1, of: GROUPS, groups: [G], ...released.released });
    // Enough batches for checkpoints on both pairs (every 3 batches).
    for (let seq = 10; seq < 16; seq++) {
      await write(b.primary, seq, ["b-own"], "q");
      await write(a.primary, seq, [stays], "q");
    }
    expect(b.storage.meta?.checkpointLsn).toBeGreaterThan(1);
    expect(a.storage.meta?.checkpointLsn).toBeGreaterThan(1);
    const restartedB = new ReplicaHost(b.storage, tuning, new Linked());
    const restartedA = new ReplicaHost(a.storage, tuning, new Linked());
    restartedB.init({ name: "p1-a", dataflowId: "df", partition: 1, spec: spec(), role: "primary", epoch: 2, hasStandby: false, version: 1 });
    restartedA.init({ name: "p0-a", dataflowId: "df", partition: 0, spec: spec(), role: "primary", epoch: 2, hasStandby: false, version: 1 });
    const epoch2 = (host: ReplicaHost, seq: number, keys: string[]) => host.write({ epoch: 2, batches: [{ producer: "p", seq, records: JSON.stringify(keys.map((k) => [k, 100, 1])) }] });
    // The adopted memory still judges the moved group at B; A still refuses it and still holds what it released.
    expect(await epoch2(restartedB, 1, [moved])).toMatchObject({ status: "ok", results: [{ status: "duplicate" }] });
    expect(await epoch2(restartedA, 2, [moved])).toEqual({ status: "ok", results: [{ status: "blocked", reason: `key group ${G} is moving to another partition`, until: "routing sends the group to its new partition" }] });
    expect(await carryOutMoveStep(restartedA, { epoch: 2, step: { kind: "release", move: 1, of: GROUPS, groups: [G] } }, tuning)).toEqual(released);
  });
});
