/** The durability rule (issue 12): which steps store their progress, and what a restart rebuilds from what they left behind. */
import { describe, expect, it } from "vitest";
import { durableMeta } from "../../shared/replica/progress-durability.ts";
import { restoreReplicaState, type ReplicaEffects } from "../../shared/replica/replica-state.ts";
import { ReplicaMetaSchema, type LogEntry, type ReplicaMeta } from "../../shared/wire/persisted.ts";
import type { WindowResult } from "../../shared/wire/window-result.ts";
import { spec } from "../helpers/fixtures.ts";

const tuning = { dedupWindow: 64, checkpointEvery: 100 };
const meta = (overrides: Partial<ReplicaMeta> = {}): ReplicaMeta => ({
  v: 1, name: "r", dataflowId: "df", partition: 0, spec: spec(), role: "primary", epoch: 1, hasStandby: true, standby: "s",
  lsn: 2, appliedLsn: 2, standbyAckLsn: 2, checkpointLsn: 0, checkpointOutputSeq: 0, outputSeq: 0, holdLogAfterLsn: null, configVersion: 1, readers: [],
  ...overrides,
});
const none = (): ReplicaEffects => ({ log: [], outputs: [] });
const result: WindowResult = { key: "a", windowStartMs: 0, windowEndMs: 1000, values: { n: 1 }, closed: true };
/** Entries 1..n, each one record of key `a` at 100 ms (inside the first window, which stays open). */
const log = (n: number): LogEntry[] => Array.from({ length: n }, (_, i) => ({ lsn: i + 1, producer: "p", seq: i + 1, records: JSON.stringify([["a", 100, 1]]) }));

describe("durableMeta", () => {
  const stored = meta();

  it("keeps the stored LSNs when only they moved (the write, the forward and the acknowledgement)", () => {
    const next = meta({ lsn: 5, appliedLsn: 4, standbyAckLsn: 4 });
    // The stored meta itself: nothing to copy or compare part by part.
    expect(durableMeta(stored, next, { ...none(), log: log(5).slice(2) })).toBe(stored);
  });

  it("stores the progress exactly when outputs are emitted, a checkpoint is taken or the log trimmed", () => {
    const next = meta({ lsn: 5, appliedLsn: 5, standbyAckLsn: 5, outputSeq: 1 });
    expect(durableMeta(stored, next, { ...none(), outputs: [{ outputSeq: 1, result }] })).toEqual(next);
    const checkpointed = meta({ lsn: 5, appliedLsn: 5, checkpointLsn: 5 });
    expect(durableMeta(stored, checkpointed, { ...none(), checkpoint: { lsn: 5, pieces: ["{}"] } })).toEqual(checkpointed);
    expect(durableMeta(stored, meta({ lsn: 3 }), { ...none(), trimLogThrough: 1 })).toEqual(meta({ lsn: 3 }));
  });

  it("stores everything exactly when a configuration or identity field changed, or an LSN moved down", () => {
    for (const change of [{ epoch: 2 }, { role: "standby" as const }, { hasStandby: false }, { holdLogAfterLsn: 1 }, { configVersion: 2 }, { readers: ["x"] }, { spec: spec({ partitions: 3 }) }]) {
      const next = meta({ lsn: 4, ...change });
      expect(durableMeta(stored, next, none()), JSON.stringify(change)).toEqual(next);
    }
    // A new standby: its acknowledged LSN starts again at 0.
    expect(durableMeta(stored, meta({ standbyAckLsn: 0 }), none())).toEqual(meta({ standbyAckLsn: 0 }));
  });

  it("stores everything exactly when any field of the meta but the three lagging LSNs changed", () => {
    const fields = Object.keys(ReplicaMetaSchema.shape) as (keyof ReplicaMeta)[];
    for (const field of fields.filter((f) => f !== "lsn" && f !== "appliedLsn" && f !== "standbyAckLsn")) {
      const value: unknown = stored[field];
      const changed =
        field === "spec" ? spec({ partitions: 3 }) : field === "role" ? "standby" : typeof value === "number" ? value + 1 : typeof value === "boolean" ? !value : typeof value === "string" ? `${value}x` : 1;
      const next = { ...meta({ lsn: 4 }), [field]: changed } as ReplicaMeta;
      expect(durableMeta(stored, next, none()), field).toEqual(next);
    }
  });

  it("stores a new replica's meta whole, and never hands back the step's object", () => {
    const next = meta();
    const durable = durableMeta(null, next, none());
    expect(durable).toEqual(next);
    expect(durable).not.toBe(next);
    expect(durableMeta(stored, next, none())).not.toBe(next);
  });
});

describe("restoreReplicaState over a stale progress row", () => {
  it("takes the LSN from the log and applies entries above the stored appliedLsn on a standby or a primary alone", () => {
    for (const role of [{ role: "standby" as const, hasStandby: false, standby: null }, { role: "primary" as const, hasStandby: false, standby: null }]) {
      const state = restoreReplicaState(meta({ ...role, lsn: 2, appliedLsn: 2, standbyAckLsn: 0 }), null, log(5), tuning);
      expect([state.meta.lsn, state.meta.appliedLsn, state.pending.length], role.role).toEqual([5, 5, 0]);
      expect(state.operator.openResults({})[0]?.values.n).toBe(5);
    }
  });

  it("keeps entries above the stored appliedLsn pending on a primary with a standby (and on a retired replica)", () => {
    for (const role of [{ role: "primary" as const }, { role: "retired" as const, hasStandby: false, standby: null }]) {
      const state = restoreReplicaState(meta({ ...role, lsn: 2, appliedLsn: 2, standbyAckLsn: 1 }), null, log(5), tuning);
      expect([state.meta.lsn, state.meta.appliedLsn, state.pending.map((e) => e.lsn)], role.role).toEqual([5, 2, [3, 4, 5]]);
    }
  });

  it("refuses a log that ends below the stored LSN, has a gap, or replays outputs the store does not count", () => {
    expect(() => restoreReplicaState(meta({ lsn: 6 }), null, log(5), tuning)).toThrow(/restored to LSN 2 of 5/);
    expect(() => restoreReplicaState(meta(), null, [...log(2), ...log(5).slice(3)], tuning)).toThrow(/log gap at LSN 3/);
    // A record at 5,000 ms closes the first window: one output, which the stored count (0) does not hold.
    const closing: LogEntry = { lsn: 3, producer: "p", seq: 3, records: JSON.stringify([["a", 5_000_000, 1]]) };
    expect(() => restoreReplicaState(meta({ role: "standby", hasStandby: false, standby: null }), null, [...log(2), closing], tuning)).toThrow(/with 1 outputs, expected .* and 0/);
  });
});
