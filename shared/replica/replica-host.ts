/**
 * Runs the replica state machine over a storage port: load on first use, then for every call
 * step → persist atomically → reply (STYLE.md §2). The Durable Object is a thin shell around it.
 */
import type { ResultFilter } from "../operators/operator.ts";
import type { LogEntry } from "../wire/persisted.ts";
import { restoreCheckpoint, type RestoredCheckpoint } from "../checkpoint/checkpoint-pieces.ts";
import type { SeedProgress } from "../checkpoint/seed-progress.ts";
import type { BatchOutcome, FlushReply, InitReplica, NumberedOutput, Refusal, Replicate, ReplicateReply, ReplicaStatus, Write, WriteReply } from "../wire/replica-rpc.ts";
import { compareResults, type WindowResult } from "../wire/window-result.ts";
import { emptyReplicaState, restoreReplicaState, statusOf, type ReplicaState, type ReplicaTuning } from "./replica-state.ts";
import { Forwarder, type ForwardPort } from "./forwarder.ts";
import { ackStandby, checkEpoch, configure, logBatches, replicate, type BatchVerdict, type StepResult } from "./replica-steps.ts";
import { continueCheckpoint, takeCheckpoint } from "./checkpoint-steps.ts";
import type { ReplicaStorage } from "./replica-storage.ts";
import { CloseDriver } from "../closing/close-driver.ts";
import { isClosingPrimary, logCloseEntry } from "./close-step.ts";

/** The refusal of a replica that was never initialised. */
export const NOT_INITIALISED: Refusal = { status: "behind", epoch: 0 };

/** Behaviour layered on a replica (stages, issue 27: `shared/stages/`). */
export interface ReplicaHooks {
  /** After every step is persisted: new outputs or a higher watermark may be due somewhere. */
  afterStep?(): void;
  /** Before a write is logged: why it must be refused (nothing is logged), or null. */
  admit?(msg: Write): string | null;
  /** The replica dropped its memory (a restart, a wipe, a failed write). */
  forgotten?(): void;
}

/** One replica: its storage, its tuning and its in-memory state (rebuilt after a restart). */
export class ReplicaHost {
  readonly storage: ReplicaStorage;
  readonly #tuning: ReplicaTuning;
  #state: ReplicaState | null = null;
  readonly #forwarder: Forwarder;
  readonly #closer: CloseDriver;
  /** Settles once what a load found pending was forwarded again (most of it was stable: open results must not go back). */
  #reconfirmed: Promise<void> = Promise.resolve();
  /** A fresh replica's seed, restored slice by slice as chunks arrive (memory only: a restart drops it). */
  seeding: SeedProgress | null = null;

  readonly #hooks: ReplicaHooks;

  /** @param forwardPort how this replica, as primary, reaches its standby. */
  constructor(storage: ReplicaStorage, tuning: ReplicaTuning, forwardPort: ForwardPort, hooks: ReplicaHooks = {}) {
    this.storage = storage;
    this.#tuning = tuning;
    this.#hooks = hooks;
    this.#forwarder = new Forwarder(forwardPort, {
      view: () => {
        const state = this.#state;
        if (state?.meta.role !== "primary") return null;
        const { epoch, hasStandby, standby, lsn, appliedLsn, standbyAckLsn } = state.meta;
        return { epoch, hasStandby, standby, lsn, appliedLsn, standbyAckLsn, pending: state.pending };
      },
      readLog: (from, to) => this.storage.readLog(from, to),
      acked: (epoch, standby, lsn) => {
        const meta = this.#state?.meta;
        if (meta?.epoch === epoch && meta.standby === standby) this.#step((state) => ackStandby(state, lsn, this.#tuning));
        else this.#forwarder.settle();
      },
    });
    this.#closer = new CloseDriver(
      {
        closing: () => this.#state !== null && isClosingPrimary(this.#state),
        logClose: () => this.#state && this.#step((state) => logCloseEntry(state, this.#tuning)),
        waitStable: (lsn) => this.#forwarder.waitStable(lsn),
      },
      forwardPort.later?.bind(forwardPort),
    );
  }

  /** Configures role and epoch; with `create`, makes an empty replica if there is none. */
  init(msg: InitReplica): { status: "ok" } | Refusal {
    const state = this.load();
    if (state) return this.#step(() => configure(state, msg, this.#tuning));
    if (msg.create !== true || msg.role === "retired") return NOT_INITIALISED;
    const { name, dataflowId, partition, spec, role, epoch, hasStandby, version: configVersion } = msg;
    const config = { role, epoch, hasStandby, standby: hasStandby ? (msg.standby ?? null) : null, holdLogAfterLsn: null, configVersion, readers: msg.readers ?? [] };
    const progress = { lsn: 0, appliedLsn: 0, standbyAckLsn: 0, checkpointLsn: 0, checkpointOutputSeq: 0, outputSeq: 0 };
    const fresh = emptyReplicaState({ v: 1, name, dataflowId, partition, spec, ...config, ...progress });
    this.#persist(fresh, { log: [], outputs: [] });
    this.#state = fresh;
    return { status: "ok" };
  }

  /** Primary: logs the batches and answers once each is stable (the forwarder carries them to the standby). */
  async write(msg: Write): Promise<WriteReply> {
    const blocked = this.load() ? (this.#hooks.admit?.(msg) ?? null) : null;
    if (blocked !== null) return { status: "blocked", reason: blocked, until: "the stage catches up" };
    const logged = this.#step((state) => logBatches(state, msg, this.#tuning));
    if (logged.status !== "ok") return logged;
    return { status: "ok", results: await Promise.all(logged.verdicts.map((v) => this.#outcome(v))) };
  }

  /** Primary: forwards whatever the standby lacks and answers once it holds every LSN logged so far. */
  async flush(epoch: number): Promise<FlushReply> {
    const state = this.load();
    if (!state) return NOT_INITIALISED;
    const refusal = checkEpoch(state, epoch, "primary");
    if (refusal) return refusal;
    const lsn = state.meta.lsn;
    return this.#forwarder.waitStable(lsn).then(
      () => ({ status: "ok", lsn }),
      (err: Error) => ({ status: "unconfirmed", reason: err.message }),
    );
  }

  async #outcome(verdict: BatchVerdict): Promise<BatchOutcome> {
    if ("done" in verdict) return verdict.done;
    const lsn = verdict.waitLsn;
    try {
      const { replicated, late } = await this.#forwarder.waitStable(lsn);
      return verdict.status === "applied" ? { status: "applied", lsn, replicated, late } : { status: "duplicate", lsn, replicated };
    } catch (err) {
      return { status: "unconfirmed", reason: err instanceof Error ? err.message : String(err) };
    }
  }

  replicate(msg: Replicate): ReplicateReply {
    return this.#step((state) => replicate(state, msg, this.#tuning));
  }

  /** Log entries in [fromLsn, toLsn] for a standby's gap fill or a fresh replica's catch-up. */
  readLog(epoch: number, fromLsn: number, toLsn: number): LogEntry[] | Refusal {
    const state = this.load();
    if (!state) return NOT_INITIALISED;
    return checkEpoch(state, epoch, "primary") ?? this.storage.readLog(fromLsn, toLsn);
  }

  /** Closed results plus open windows from the stable prefix; after a load, once what it found pending was forwarded again. */
  async readResults(epoch: number, filter: ResultFilter): Promise<{ status: "ok"; results: WindowResult[] } | Refusal> {
    this.load();
    await this.#reconfirmed;
    const state = this.load();
    if (!state) return NOT_INITIALISED;
    const refusal = checkEpoch(state, epoch, "primary");
    if (refusal) return refusal;
    const closed = this.storage.readOutputs(filter, state.maxWindowMs);
    const results = [...closed, ...state.operator.openResults(filter)].sort(compareResults);
    return { status: "ok", results: filter.limit === undefined ? results : results.slice(0, filter.limit) };
  }

  /** Outputs after `afterSeq`, for copying to a fresh replica or a feed; `lsn`: the LSN logged now. */
  readOutputPage(epoch: number, afterSeq: number, limit: number): { status: "ok"; outputs: NumberedOutput[]; lsn: number } | Refusal {
    const state = this.load();
    if (!state) return NOT_INITIALISED;
    return checkEpoch(state, epoch, "primary") ?? { status: "ok", outputs: this.storage.readOutputPage(afterSeq, limit), lsn: state.meta.lsn };
  }

  /** Progress for probes and status pages, or null when never initialised. */
  status(): ReplicaStatus | null {
    const state = this.load();
    return state && statusOf(state);
  }

  /** A probe's answer: {@link status}, after staging the next slice of a checkpoint spread over steps, so an idle replica finishes it. */
  probe(): ReplicaStatus | null {
    if (this.load()?.spread) this.#step(() => ({ reply: null, effects: { log: [], outputs: [] } }));
    this.#closer.kick();
    return this.status();
  }

  /** Keeps every log entry above `lsn` until a standby is attached or the epoch changes (seeding). A hold only
   * moves down: a late or repeated request must not release entries an earlier snapshot's copy still needs. */
  holdLog(lsn: number): void {
    const state = this.load();
    if (!state) return;
    const current = state.meta.holdLogAfterLsn;
    state.meta.holdLogAfterLsn = current === null ? lsn : Math.min(current, lsn);
    this.#persist(state, { log: [], outputs: [] });
  }

  /** Checkpoints the stable state now (a survivor asked for a seed before its first checkpoint). */
  checkpointNow(): void {
    this.#step((state) => ({ reply: null, effects: takeCheckpoint(state, { log: [], outputs: [] }, this.#tuning) }));
  }

  /** Takes a freshly installed seed as its state without reading it back from storage. */
  adopt(meta: ReplicaState["meta"], checkpoint: RestoredCheckpoint): void {
    this.#state = restoreReplicaState(meta, checkpoint, [], this.#tuning);
  }

  /** Drops memory so the next call reloads from storage (after a wipe or a failed write). */
  forget(): void {
    this.#state = null;
    this.seeding = null;
    this.#closer.stop();
    this.#forwarder.fail("the replica restarted");
    this.#hooks.forgotten?.();
  }

  /** Resolves once the entry at `lsn` is stable (applied, and held by the standby if any); rejects if a forward fails first. */
  waitStable(lsn: number): Promise<unknown> {
    return this.#forwarder.waitStable(lsn);
  }

  /** Runs a step of another capability (`shared/stages/`) exactly as this host's own: persisted atomically before it replies. */
  step<Reply>(run: (state: ReplicaState) => StepResult<Reply>): Reply | Refusal {
    return this.#step(run);
  }

  #step<Reply>(run: (state: ReplicaState) => StepResult<Reply>): Reply | Refusal {
    const state = this.load();
    if (!state) return NOT_INITIALISED;
    const { reply, effects } = run(state);
    // One slice per step; the step that began a spread checkpoint staged its first already.
    if (!effects.checkpointStage?.begin) continueCheckpoint(state, effects);
    this.#persist(state, effects);
    this.#forwarder.settle(effects.late);
    this.#closer.kick();
    this.#hooks.afterStep?.();
    return reply;
  }

  #persist(state: ReplicaState, effects: StepResult<unknown>["effects"]): void {
    try {
      this.storage.persist(state.meta, effects);
    } catch (err) {
      // Memory ran ahead of storage: forget it so the next call reloads what is durable.
      this.forget();
      throw err;
    }
  }

  /** Loads state on first use; a failed load leaves memory empty so the next call retries. */
  load(): ReplicaState | null {
    if (this.#state) return this.#state;
    const meta = this.storage.loadMeta();
    if (!meta) return null;
    const checkpoint = restoreCheckpoint(meta.spec, this.storage.loadCheckpointRows(meta.checkpointLsn));
    // To the log's end: the stored LSN may be behind it (progress-durability.ts). Pending entries are forwarded at once.
    const log = this.storage.readLog((checkpoint?.lsn ?? 0) + 1, Number.MAX_SAFE_INTEGER);
    const state = (this.#state = restoreReplicaState(meta, checkpoint, log, this.#tuning));
    if (state.pending.length > 0) this.#reconfirmed = this.#forwarder.waitStable(state.meta.lsn).then(() => undefined, () => undefined);
    return state;
  }
}
