/**
 * How broken variants are injected (issue 10): each is a set of hooks the simulator
 * wraps around the real code — around a replica call (rewriting the message, the
 * replica's state for the call, or the reply), around a replica's storage, or around
 * what the monitor saves. No switch for them exists in product code. A new variant is
 * one more entry in `variants.ts` with its hooks here (or in `variant-hooks-monitor.ts`).
 */
import { recordSeq } from "../../shared/dedup.ts";
import type { LiveOperator } from "../../shared/operators/operator.ts";
import type { ReplicaHost } from "../../shared/replica/replica-host.ts";
import type { Role } from "../../shared/wire/persisted.ts";
import type { DataflowSpec } from "../../shared/wire/dataflow-spec.ts";
import type { LogEntry } from "../../shared/wire/persisted.ts";
import type { StageNode } from "../../shared/stages/stage-node.ts";
import type { ReplicaState } from "../../shared/replica/replica-state.ts";
import type { Deliver, DeliverReply } from "../../shared/wire/replica-rpc.ts";
import type { BatchOutcome, FinishSeed, FinishSeedReply, FlushReply, NumberedOutput, Refusal, Replicate, ReplicateReply, ReplicaStatus, SeedProgressReply, Write, WriteReply } from "../../shared/wire/replica-rpc.ts";
import type { DataflowRecord, HealthMap } from "../../shared/wire/routing.ts";
import type { MoveStepReply, MoveStepRequest } from "../../shared/moves/move-step.ts";
import type { FluxRecord } from "../../shared/wire/window-result.ts";
import type { MemoryReplicaStorage } from "../helpers/memory-replica-storage.ts";
import type { SimMonitor } from "./sim-monitors.ts";

/** Wraps one call to a replica: `run` is the real call. */
export type Wrap<M, R> = (host: ReplicaHost, msg: M, run: (msg: M) => R) => R;
type ReadLogCall = { epoch: number; fromLsn: number; toLsn: number };
export type ReadPageCall = { epoch: number; afterSeq: number; limit: number };
export type OutputPage = { status: "ok"; outputs: NumberedOutput[]; lsn: number } | Refusal;

export interface VariantHooks {
  /** Around a write to a primary (its dedup and logging run synchronously at the start of the call). */
  write?: Wrap<Write, Promise<WriteReply>>;
  flush?: Wrap<{ epoch: number }, Promise<FlushReply>>;
  /** Around the standby's side of a forward (or of recovery's catch-up). */
  replicate?: Wrap<Replicate, ReplicateReply>;
  /** Around a primary's forward as it sees it (`run` sends it through the network to the standby named in `host`'s meta). */
  forward?: (standby: string, msg: Replicate, run: (msg: Replicate) => Promise<ReplicateReply>) => Promise<ReplicateReply>;
  readLog?: Wrap<ReadLogCall, LogEntry[] | Refusal>;
  readOutputPage?: Wrap<ReadPageCall, OutputPage>;
  /** Around the fresh replica's answer to how much of a seed it holds. */
  seedProgress?: Wrap<{ snapshot: string; chunks: number }, SeedProgressReply>;
  /** Around the fresh replica's install of a seed. */
  finishSeed?: Wrap<FinishSeed, FinishSeedReply>;
  /** Around a primary's answer to a step of a key-group move (issue 28). */
  moveStep?: Wrap<MoveStepRequest, Promise<MoveStepReply>>;
  /** Around a primary's own later step (a spread close's next entry; `step` is the real one). */
  later?: <T>(host: ReplicaHost, step: () => T) => T;
  /** Replaces the operator of a replica's state when the simulator looks at it (`spec`: the dataflow's). */
  operator?: (live: LiveOperator, spec: DataflowSpec) => LiveOperator;
  /** Wraps a replica's storage when it is created. */
  storage?: (storage: MemoryReplicaStorage, dedupWindow: number) => void;
  /** Around a stage primary's answer to a delivery (issue 27; `node` holds the stage replica). */
  deliver?: (node: StageNode, msg: Deliver, run: (msg: Deliver) => Promise<DeliverReply>) => Promise<DeliverReply>;
  /** Around an upstream primary's sending of a delivery (`sender`: its state, null when down; `run` sends it through the network). */
  sendDelivery?: (sender: ReplicaState | null, msg: Deliver, run: (msg: Deliver) => Promise<DeliverReply>) => Promise<DeliverReply>;
  /** Rewrites the sub-batches a router is about to write (partition → records). */
  route?: (subBatches: Map<number, FluxRecord[]>) => Map<number, FluxRecord[]>;
  /**
   * Rewrites what the monitor is about to save (`before`: the record as stored; `status`:
   * what a replica would answer to a probe now, null when down or empty).
   */
  save?: (record: DataflowRecord, before: DataflowRecord, health: HealthMap, status: (name: string) => ReplicaStatus | null) => void;
  /** The monitor objects a tick of `own` depends on (issue 29; default: `own` only): it waits while any is down, and is as slow as the slowest. */
  monitorsOf?: (own: SimMonitor, all: readonly SimMonitor[]) => readonly SimMonitor[];
}

/** no-dedup: the primary judges every batch against empty dedup state. */
export const withoutDedup =
  (dedupWindow: number): Wrap<Write, Promise<WriteReply>> =>
  (host, msg, run) => {
    const state = host.load();
    if (!state) return run(msg);
    const { dedup, pending } = state;
    state.dedup = {};
    state.pending = [];
    try {
      return run(msg);
    } finally {
      for (const entry of state.pending) pending.push(entry);
      for (const b of msg.batches) if (Object.keys(state.dedup).length > 0) recordSeq(dedup, b.producer, b.seq, dedupWindow);
      state.dedup = dedup;
      state.pending = pending;
    }
  };

/** unstable-outputs: the primary applies (and emits from) a batch at once, as if it had no standby, keeping its log for the standby. */
export const applyUnstable: Wrap<Write, Promise<WriteReply>> = (host, msg, run) => {
  const meta = host.load()?.meta;
  if (!meta?.hasStandby) return run(msg);
  const { holdLogAfterLsn: hold, standby } = meta;
  meta.hasStandby = false;
  meta.standby = null;
  meta.holdLogAfterLsn = Math.min(hold ?? Number.POSITIVE_INFINITY, meta.standbyAckLsn);
  try {
    return run(msg);
  } finally {
    meta.hasStandby = true;
    meta.standby = standby;
    meta.holdLogAfterLsn = hold;
  }
};

/** early-duplicate-answer: a resent batch whose entry is still pending is answered at once, as if stable. */
export const answerPendingAtOnce: Wrap<Write, Promise<WriteReply>> = (host, msg, run) => {
  const pending = host.load()?.pending ?? [];
  const early = msg.batches.map((b): BatchOutcome | null => {
    const entry = pending.find((e) => e.producer === b.producer && e.seq === b.seq);
    return entry ? { status: "duplicate", lsn: entry.lsn, replicated: true } : null;
  });
  return run(msg).then((reply) => (reply.status === "ok" ? { ...reply, results: reply.results.map((r, i) => early[i] ?? r) } : reply));
};

/** early-group-ack: only the first half of a forwarded group reaches the standby, yet the primary counts the whole group as held. */
export const ackWholeGroup: NonNullable<VariantHooks["forward"]> = async (_standby, msg, run) => {
  if (msg.entries.length < 2) return run(msg);
  const reply = await run({ ...msg, entries: msg.entries.slice(0, Math.ceil(msg.entries.length / 2)), upToLsn: 0 });
  return reply.status === "ok" || reply.status === "gap" ? { status: "ok", lsn: msg.upToLsn } : reply;
};

/** no-fencing: a call is taken as coming from the replica's own epoch, and served whatever role the replica holds. */
export function unfenced<M extends { epoch: number }, R>(role: Role): Wrap<M, R> {
  return (host, msg, run) => {
    const state = host.load();
    if (!state) return run(msg);
    const own = { ...msg, epoch: state.meta.epoch };
    if (state.meta.role === role || state.meta.role === "retired") return run(own);
    const held = state.meta.role;
    state.meta.role = role;
    try {
      return run(own);
    } finally {
      if (state.meta.role === role) state.meta.role = held;
    }
  };
}

/** out-of-order-standby: entries past a gap are renumbered to follow what the standby holds. */
export const pastGaps: Wrap<Replicate, ReplicateReply> = (host, msg, run) => {
  const held = host.status()?.lsn ?? 0;
  const first = msg.entries[0];
  if (!first || first.lsn <= held + 1) return run(msg);
  const entries = msg.entries.map((e, i) => ({ ...e, lsn: held + 1 + i }));
  return run({ ...msg, entries, upToLsn: Math.min(msg.upToLsn, held + entries.length) });
};

/** standby-acks-early: the standby stores all but the last entry it is sent, and answers as if it held them all. */
export const acksEarly: Wrap<Replicate, ReplicateReply> = (_host, msg, run) => {
  const reply = run({ ...msg, entries: msg.entries.slice(0, -1) });
  return reply.status === "gap" && msg.entries.length > 0 ? { status: "ok", lsn: msg.upToLsn } : reply;
};

/** early-log-trim: every write trims the log through the stable prefix, whatever the standby holds. */
export function trimEarly(storage: MemoryReplicaStorage): void {
  const persist = storage.persist.bind(storage);
  storage.persist = (meta, effects) => persist(meta, { ...effects, trimLogThrough: meta.appliedLsn });
}

/** log-to-stored-lsn: a load reads the log only up to the stored LSN, which may be behind the log's last row. */
export function logToStoredLsn(storage: MemoryReplicaStorage): void {
  const readLog = storage.readLog.bind(storage);
  storage.readLog = (fromLsn, toLsn) => readLog(fromLsn, toLsn === Number.MAX_SAFE_INTEGER ? (storage.meta?.lsn ?? 0) : toLsn);
}

/** outputs-without-progress: the stored output count moves only with checkpoints and configurations, like a lagging LSN. */
export function outputsWithoutProgress(storage: MemoryReplicaStorage): void {
  const persist = storage.persist.bind(storage);
  storage.persist = (meta, effects) => {
    const before = storage.meta;
    persist(meta, effects);
    const plain = effects.checkpoint === undefined && effects.trimLogThrough === undefined;
    if (before && storage.meta && plain && before.role === meta.role && before.epoch === meta.epoch) storage.meta = { ...storage.meta, outputSeq: before.outputSeq };
  };
}

/** cursor-repeat: an output page starts at the reader's cursor instead of after it. */
export const pageFromCursor: Wrap<ReadPageCall, OutputPage> = (_host, msg, run) => run({ ...msg, afterSeq: Math.max(0, msg.afterSeq - 1) });

/** cursor-skip: a page of several outputs leaves out its first. */
export const pageSkipsFirst: Wrap<ReadPageCall, OutputPage> = (_host, msg, run) => {
  const page = run(msg);
  return page.status === "ok" && page.outputs.length > 1 ? { ...page, outputs: page.outputs.slice(1) } : page;
};

/** cursor-retract: a reader at the end of the stream also gets the first open window, numbered as the next output. */
export const pageWithOpenWindow: Wrap<ReadPageCall, OutputPage> = (host, msg, run) => {
  const page = run(msg);
  const state = host.load();
  if (page.status !== "ok" || !state || page.outputs.length > 0 || msg.afterSeq !== state.meta.outputSeq) return page;
  const open = state.operator.openResults({})[0];
  return open ? { ...page, outputs: [{ outputSeq: state.meta.outputSeq + 1, result: open }] } : page;
};

/** Runs `run` with the replica's operator changed by `patch` for the call (only on a standby). */
function onStandbyOperator<M, R>(patch: (operator: LiveOperator) => Partial<LiveOperator>): Wrap<M, R> {
  return (host, msg, run) => {
    const state = host.load();
    if (!state || state.meta.role !== "standby") return run(msg);
    const operator = state.operator;
    state.operator = { ...operator, ...patch(operator) };
    try {
      return run(msg);
    } finally {
      state.operator = operator;
    }
  };
}

/** dropped-tick-on-standby: the standby logs the clock ticks it is sent, but its operator ignores them. */
export const dropTicks: Wrap<Replicate, ReplicateReply> = onStandbyOperator(() => ({ tick: () => undefined }));

/** heavy-hitters-divergence: the standby's operator counts every number in a record twice. */
export const doubleOnStandby: Wrap<Replicate, ReplicateReply> = onStandbyOperator((operator) => ({
  process: (records, out) => operator.process(records.map(doubled), out),
}));

function doubled(record: FluxRecord): FluxRecord {
  const [key, timeMs, ...values] = record;
  return [key, timeMs, ...values.map((v) => (typeof v === "number" ? v * 2 : v))];
}

/** late-by-a-window: the router puts every record 100 ms (one window) later than its time; both replicas agree and count every record. */
export function shiftWindow(subBatches: Map<number, FluxRecord[]>): Map<number, FluxRecord[]> {
  const shifted = new Map<number, FluxRecord[]>();
  for (const [partition, records] of subBatches) shifted.set(partition, records.map(([key, timeMs, ...values]): FluxRecord => [key, timeMs + 100, ...values]));
  return shifted;
}
