/**
 * One replica of one dataflow partition: a thin Durable Object shell around
 * `ReplicaHost` (shared/replica), which steps the pure state machine and persists every
 * step's effects in one SQLite transaction before the reply leaves the object.
 */
import { DurableObject } from "cloudflare:workers";
import { parseFluxConfig } from "../shared/config.ts";
import type { ResultFilter } from "../shared/operators/tumbling-window.ts";
import { ReplicaHost } from "../shared/replica/replica-host.ts";
import type { AckStandby, ApplyBatch, InitReplica, Replicate } from "../shared/wire/replica-rpc.ts";
import { SqlReplicaStorage } from "./sql-replica-storage.ts";

export class PartitionReplica extends DurableObject<Env> {
  // SQLite calls are synchronous, so each method runs to completion without interleaving.
  readonly #host: ReplicaHost;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#host = new ReplicaHost(new SqlReplicaStorage(ctx.storage), parseFluxConfig(env));
  }

  async init(msg: InitReplica) {
    return this.#host.init(msg);
  }

  async applyBatch(msg: ApplyBatch) {
    return this.#host.applyBatch(msg);
  }

  async replicate(msg: Replicate) {
    return this.#host.replicate(msg);
  }

  async ackStandby(msg: AckStandby) {
    return this.#host.ackStandby(msg);
  }

  async readLog(epoch: number, fromLsn: number, toLsn: number) {
    return this.#host.readLog(epoch, fromLsn, toLsn);
  }

  async readResults(epoch: number, filter: ResultFilter) {
    return this.#host.readResults(epoch, filter);
  }

  async status() {
    return this.#host.status();
  }
}
