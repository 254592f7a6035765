/** A stage primary judging deliveries against applied plus pending progress (issue 27), then logging and applying them. */
import { describe, expect, it } from "vitest";
import { DataflowSpecSchema } from "../../../shared/dataflow-checks/dataflow-spec-schema.ts";
import { deliveryOf } from "../../../shared/exchange/delivery-entry.ts";
import { emptyReplicaState, type ReplicaState } from "../../../shared/replica/replica-state.ts";
import { ackStandby } from "../../../shared/replica/replica-steps.ts";
import { logDelivery, stableHw } from "../../../shared/stages/delivery-step.ts";
import type { Delivery } from "../../../shared/wire/exchange.ts";
import type { LogEntry, ReplicaMeta } from "../../../shared/wire/persisted.ts";
import type { Deliver } from "../../../shared/wire/replica-rpc.ts";
import type { FluxRecord } from "../../../shared/wire/window-result.ts";

const tuning = { dedupWindow: 64, checkpointEvery: 100 };
const SPEC = DataflowSpecSchema.parse({ from: "up", key: "key", window: { kind: "tumbling", sizeMs: 100 }, aggregates: { n: { op: "sum", field: "values.n" } }, partitions: 1 });

const meta = (overrides: Partial<ReplicaMeta> = {}): ReplicaMeta => ({
  v: 1, name: "down-0", dataflowId: "down", partition: 0, spec: SPEC, role: "primary", epoch: 1, hasStandby: true, standby: "down-0s",
  lsn: 0, appliedLsn: 0, standbyAckLsn: 0, checkpointLsn: 0, checkpointOutputSeq: 0, outputSeq: 0, holdLogAfterLsn: null, configVersion: 1, readers: [],
  ...overrides,
});
const UP0 = { dataflow: "up", partition: 0, partitions: 1 };
const stage = (overrides: Partial<ReplicaMeta> = {}): ReplicaState => emptyReplicaState(meta(overrides));
const alone = (): ReplicaState => stage({ hasStandby: false, standby: null });

/** A record of key `k` at D's event time 99 (U's window [0, 100)) whose `n` is `seq`, so each output is recognisable. */
const rec = (seq: number, k = "a"): FluxRecord => [k, 99, seq];

interface From {
  watermarkMs?: number | null;
  /** The upstream partition (default 0) and how many `up` has (default 1). */
  partition?: number;
  partitions?: number;
  epoch?: number;
}

/** A delivery from `up` covering its outputs (fromSeq, toSeq], with records at `seqs`. */
function deliver(fromSeq: number, toSeq: number, seqs: number[], { watermarkMs = null, partition = 0, partitions = 1, epoch = 1 }: From = {}): Deliver {
  const delivery: Delivery = { source: { dataflow: "up", partition, partitions }, fromSeq, toSeq, records: seqs.map((s) => rec(s)), outputSeqs: seqs, watermarkMs };
  return { epoch, delivery };
}

/** The delivery a logged entry holds. */
const held = (entry: LogEntry | undefined): Delivery => {
  if (!entry) throw new Error("no entry");
  return deliveryOf(entry);
};

describe("logDelivery refusals", () => {
  it("refuses a delivery from an older epoch as stale, and one from a newer epoch as behind", () => {
    const state = stage({ epoch: 3 });
    expect(logDelivery(state, deliver(0, 1, [1], { epoch: 2 }), tuning)).toEqual({ reply: { status: "stale", epoch: 3 }, effects: { log: [], outputs: [] } });
    expect(logDelivery(state, deliver(0, 1, [1], { epoch: 4 }), tuning).reply).toEqual({ status: "behind", epoch: 3 });
    expect(state.meta.lsn).toBe(0);
  });

  it("refuses a delivery on a standby", () => {
    expect(logDelivery(stage({ role: "standby", hasStandby: false, standby: null }), deliver(0, 1, [1]), tuning).reply).toEqual({ status: "wrong-role", role: "standby" });
  });

  it("answers unknown-source to a dataflow the stage does not read, logging nothing", () => {
    const state = stage();
    const msg: Deliver = { epoch: 1, delivery: { ...deliver(0, 1, [1]).delivery, source: { dataflow: "other", partition: 2, partitions: 3 } } };
    const { reply, effects } = logDelivery(state, msg, tuning);
    expect(reply).toEqual({ done: { status: "unknown-source", message: "dataflow 'down' does not read 'other' partition 2" } });
    expect(effects.log).toEqual([]);
    expect(state.pending).toEqual([]);
  });
});

describe("logDelivery with a standby", () => {
  it("logs an accepted delivery as a pending entry and waits for it to be stable", () => {
    const state = stage();
    const { reply, effects } = logDelivery(state, deliver(0, 2, [1, 2]), tuning);
    expect(reply).toEqual({ waitLsn: 1, status: "accepted" });
    expect(effects.log.map((e) => e.lsn)).toEqual([1]);
    expect(state.pending).toEqual(effects.log);
    expect(held(state.pending[0]).outputSeqs).toEqual([1, 2]);
    expect([state.meta.lsn, state.meta.appliedLsn, stableHw(state, UP0)]).toEqual([1, 0, 0]);
  });

  it("logs only the records above what is already pending", () => {
    const state = stage();
    logDelivery(state, deliver(0, 2, [1, 2]), tuning);
    expect(logDelivery(state, deliver(0, 4, [1, 2, 3, 4]), tuning).reply).toEqual({ waitLsn: 2, status: "accepted" });
    expect(held(state.pending[1])).toMatchObject({ fromSeq: 0, toSeq: 4, outputSeqs: [3, 4], records: [rec(3), rec(4)] });
  });

  it("makes a redelivery of pending outputs a duplicate waiting for the pending entry of that source", () => {
    const state = stage();
    const two = { partitions: 2 };
    logDelivery(state, deliver(0, 2, [1, 2], two), tuning);
    logDelivery(state, deliver(0, 1, [1], { ...two, partition: 1 }), tuning);
    const { reply, effects } = logDelivery(state, deliver(0, 2, [1, 2], two), tuning);
    expect(reply).toEqual({ waitLsn: 1, status: "duplicate" });
    expect(effects.log).toEqual([]);
    expect(state.meta.lsn).toBe(2);
  });

  it("answers a redelivery of applied outputs at once as a duplicate with the stable hw", () => {
    const state = stage();
    logDelivery(state, deliver(0, 3, [1, 3]), tuning);
    ackStandby(state, 1, tuning);
    expect(logDelivery(state, deliver(1, 3, [3]), tuning)).toEqual({ reply: { done: { status: "duplicate", hw: 3 } }, effects: { log: [], outputs: [] } });
  });

  it("answers a gap with the stable hw, not the hw of pending entries", () => {
    const state = stage();
    logDelivery(state, deliver(0, 2, [1, 2]), tuning);
    expect(logDelivery(state, deliver(3, 5, [4]), tuning).reply).toEqual({ done: { status: "gap", hw: 0 } });
    ackStandby(state, 1, tuning);
    expect(logDelivery(state, deliver(3, 5, [4]), tuning).reply).toEqual({ done: { status: "gap", hw: 2 } });
    expect(state.meta.lsn).toBe(1);
  });

  it("applies the records once the standby holds the entry", () => {
    const state = stage();
    logDelivery(state, deliver(0, 2, [1, 2]), tuning);
    const { effects } = ackStandby(state, 1, tuning);
    expect(effects.outputs).toEqual([]);
    expect(state.sources).toEqual({ "up/0": { hw: 2, watermarkMs: null, partitions: 1 } });
    expect(stableHw(state, UP0)).toBe(2);
    expect(state.operator.openResults({})).toMatchObject([{ key: "a", windowStartMs: 0, values: { n: 3 } }]);
  });
});

describe("logDelivery without a standby", () => {
  it("applies an accepted delivery at once and answers with the new hw", () => {
    const state = alone();
    const { reply, effects } = logDelivery(state, deliver(0, 4, [2, 4]), tuning);
    expect(reply).toEqual({ done: { status: "accepted", hw: 4 } });
    expect(effects.log.map((e) => e.lsn)).toEqual([1]);
    expect(state.pending).toEqual([]);
    expect([state.meta.lsn, state.meta.appliedLsn]).toEqual([1, 1]);
    expect(state.sources["up/0"]).toEqual({ hw: 4, watermarkMs: null, partitions: 1 });
    expect(state.operator.openResults({})).toMatchObject([{ key: "a", values: { n: 6 } }]);
  });

  it("answers a redelivery of applied outputs as a duplicate with the hw, and a gap with it too", () => {
    const state = alone();
    logDelivery(state, deliver(0, 4, [2, 4]), tuning);
    expect(logDelivery(state, deliver(0, 4, [2, 4]), tuning).reply).toEqual({ done: { status: "duplicate", hw: 4 } });
    expect(logDelivery(state, deliver(6, 8, [7]), tuning).reply).toEqual({ done: { status: "gap", hw: 4 } });
    expect(state.operator.openResults({})).toMatchObject([{ values: { n: 6 } }]);
  });
});

describe("logDelivery and the stage's watermark", () => {
  it("logs a watermark-only delivery that raises the watermark, and closes windows once it is applied", () => {
    const state = stage();
    logDelivery(state, deliver(0, 2, [1, 2]), tuning);
    const { reply, effects } = logDelivery(state, deliver(2, 2, [], { watermarkMs: 150 }), tuning);
    expect(reply).toEqual({ waitLsn: 2, status: "accepted" });
    expect(held(effects.log[0])).toMatchObject({ fromSeq: 2, toSeq: 2, records: [], watermarkMs: 150 });
    const applied = ackStandby(state, 2, tuning).effects;
    expect(applied.outputs).toEqual([{ outputSeq: 1, result: { key: "a", windowStartMs: 0, windowEndMs: 100, values: { n: 3 }, closed: true } }]);
    expect(state.meta.outputSeq).toBe(1);
    expect(state.sources["up/0"]?.watermarkMs).toBe(150);
  });

  it("closes windows at once without a standby", () => {
    const state = alone();
    logDelivery(state, deliver(0, 1, [1]), tuning);
    const { reply, effects } = logDelivery(state, deliver(1, 1, [], { watermarkMs: 100 }), tuning);
    expect(reply).toEqual({ done: { status: "accepted", hw: 1 } });
    expect(effects.outputs.map((o) => [o.outputSeq, o.result.windowEndMs, o.result.values.n])).toEqual([[1, 100, 1]]);
  });

  it("makes a watermark that raises nothing a duplicate", () => {
    const state = alone();
    logDelivery(state, deliver(0, 1, [1], { watermarkMs: 150 }), tuning);
    expect(logDelivery(state, deliver(1, 1, [], { watermarkMs: 150 }), tuning).reply).toEqual({ done: { status: "duplicate", hw: 1 } });
    expect(logDelivery(state, deliver(1, 1, [], { watermarkMs: 120 }), tuning).reply).toEqual({ done: { status: "duplicate", hw: 1 } });
    expect(state.meta.lsn).toBe(1);
  });

  it("closes windows on the lowest watermark over every upstream partition, none while one is silent", () => {
    const state = alone();
    const two = { partitions: 2 };
    expect(logDelivery(state, deliver(0, 1, [1], { ...two, watermarkMs: 300 }), tuning).effects.outputs).toEqual([]);
    expect(logDelivery(state, deliver(0, 0, [], { ...two, partition: 1, watermarkMs: 50 }), tuning).effects.outputs).toEqual([]);
    const { effects } = logDelivery(state, deliver(0, 0, [], { ...two, partition: 1, watermarkMs: 200 }), tuning);
    expect(effects.outputs.map((o) => [o.result.windowEndMs, o.result.values.n])).toEqual([[100, 1]]);
    expect(Object.keys(state.sources).sort()).toEqual(["up/0", "up/1"]);
  });
});
