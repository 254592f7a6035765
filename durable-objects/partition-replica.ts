/**
 * One replica of one dataflow partition: a thin adapter that loads state, calls the
 * pure step from `shared/replica`, persists its effects in one transaction and answers.
 */
import { DurableObject } from "cloudflare:workers";
import { parseFluxConfig } from "../shared/config.ts";
import type { ResultFilter } from "../shared/operators/tumbling-window.ts";
import { emptyReplicaState, restoreReplicaState, type ReplicaState, type ReplicaTuning } from "../shared/replica/replica-state.ts";
import { ackStandby, applyBatch, checkEpoch, replicate, type StepResult } from "../shared/replica/replica-steps.ts";
import type { LogEntry } from "../shared/wire/persisted.ts";
import type {
  AckStandby,
  AckStandbyReply,
  ApplyBatch,
  ApplyBatchReply,
  InitReplica,
  Refusal,
  Replicate,
  ReplicateReply,
  ReplicaStatus,
} from "../shared/wire/replica-rpc.ts";
import type { WindowResult } from "../shared/wire/window-result.ts";
import { ReplicaStore } from "./replica-store.ts";

const NOT_INITIALISED: Refusal = { status: "behind", epoch: 0 };

export class PartitionReplica extends DurableObject<Env> {
  readonly #store: ReplicaStore;
  readonly #tuning: ReplicaTuning;
  #state: ReplicaState | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#store = new ReplicaStore(ctx.storage);
    this.#tuning = parseFluxConfig(env);
  }

  /** Configures role and epoch. Idempotent; refuses an epoch older than the stored one. */
  async init(msg: InitReplica): Promise<{ status: "ok" } | Refusal> {
    const state = this.#load();
    if (state && msg.epoch < state.meta.epoch) return { status: "stale", epoch: state.meta.epoch };
    if (state) {
      Object.assign(state.meta, { role: msg.role, epoch: msg.epoch, hasStandby: msg.hasStandby });
      this.#store.persist(state.meta, { log: [], outputs: [] });
      return { status: "ok" };
    }
    const fresh = emptyReplicaState({
      v: 1,
      ...msg,
      lsn: 0,
      appliedLsn: 0,
      standbyAckLsn: 0,
      checkpointLsn: 0,
      outputSeq: 0,
    });
    this.#store.persist(fresh.meta, { log: [], outputs: [] });
    this.#state = fresh;
    return { status: "ok" };
  }

  async applyBatch(msg: ApplyBatch): Promise<ApplyBatchReply> {
    return this.#step((state) => applyBatch(state, msg, this.#tuning));
  }

  async replicate(msg: Replicate): Promise<ReplicateReply> {
    return this.#step((state) => replicate(state, msg, this.#tuning));
  }

  async ackStandby(msg: AckStandby): Promise<AckStandbyReply> {
    return this.#step((state) => ackStandby(state, msg, this.#tuning));
  }

  /** Log entries in [fromLsn, toLsn] for a standby's gap fill; only the primary serves them. */
  async readLog(epoch: number, fromLsn: number, toLsn: number): Promise<LogEntry[] | Refusal> {
    const state = this.#load();
    if (!state) return NOT_INITIALISED;
    return checkEpoch(state, epoch, "primary") ?? this.#store.readLog(fromLsn, toLsn);
  }

  /** Closed results from storage plus open windows, all from the stable prefix. */
  async readResults(epoch: number, filter: ResultFilter): Promise<{ status: "ok"; results: WindowResult[] } | Refusal> {
    const state = this.#load();
    if (!state) return NOT_INITIALISED;
    const refusal = checkEpoch(state, epoch, "primary");
    if (refusal) return refusal;
    const closed = this.#store.readOutputs(filter, state.meta.spec.window.sizeMs);
    return { status: "ok", results: [...closed, ...state.op.openResults(state.operator, filter)] };
  }

  async status(): Promise<ReplicaStatus | null> {
    const state = this.#load();
    if (!state) return null;
    const { name, role, epoch, lsn, appliedLsn, standbyAckLsn, checkpointLsn, outputSeq } = state.meta;
    return { name, role, epoch, lsn, appliedLsn, standbyAckLsn, checkpointLsn, outputSeq, lateRecords: state.operator.lateRecords };
  }

  #step<Reply>(run: (state: ReplicaState) => StepResult<Reply>): Reply | Refusal {
    const state = this.#load();
    if (!state) return NOT_INITIALISED;
    const { reply, effects } = run(state);
    try {
      this.#store.persist(state.meta, effects);
    } catch (err) {
      // Memory ran ahead of storage: drop it so the next call reloads what is durable.
      this.#state = null;
      throw err;
    }
    return reply;
  }

  /**
   * Loads state on first use. SQLite reads are synchronous, so no other call can
   * interleave; a failed load leaves `#state` empty and the next call retries it.
   */
  #load(): ReplicaState | null {
    if (this.#state) return this.#state;
    const meta = this.#store.loadMeta();
    if (!meta) return null;
    const checkpoint = this.#store.loadCheckpoint();
    const log = this.#store.readLog((checkpoint?.lsn ?? 0) + 1, meta.lsn);
    this.#state = restoreReplicaState(meta, checkpoint, log, this.#tuning);
    return this.#state;
  }
}
