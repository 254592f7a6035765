/**
 * One replica of one dataflow partition: a thin Durable Object shell around
 * `ReplicaHost` (shared/replica), which steps the pure state machine and persists every
 * step's effects in one SQLite transaction before the reply leaves the object. SQLite
 * calls are synchronous, so each step runs to completion without interleaving.
 */
import { DurableObject } from "cloudflare:workers";
import { parseFluxConfig } from "../shared/config.ts";
import type { ResultFilter } from "../shared/operators/operator.ts";
import type { ReplicaHost } from "../shared/replica/replica-host.ts";
import type { ReplicaTuning } from "../shared/replica/replica-state.ts";
import { carryOutMoveStep, type MoveStepRequest } from "../shared/moves/move-step.ts";
import { StageNode } from "../shared/stages/stage-node.ts";
import { acceptOutputs, acceptSeedChunk, beginSeed, finishSeed, readSeedChunk, seedProgress } from "../shared/replica/replica-seeding.ts";
import { SLOW_FAULT_DELAY_MS, type FaultKind } from "../shared/wire/admin.ts";
import type { DataflowSpec } from "../shared/wire/dataflow-spec.ts";
import type { Deliver, FinishSeed, InitReplica, NumberedOutput, Replicate, Write } from "../shared/wire/replica-rpc.ts";
import { deliveryPort, forwardPort } from "../platform/replica-ports.ts";
import { DelivererWake } from "../platform/deliverer-wake.ts";
import { SqlReplicaStorage } from "./sql-replica-storage.ts";

type ActiveFault = Exclude<FaultKind, "wipe" | "heal">;

/** A primary's forward to its standby gets this share of the replica timeout. */
const FORWARD_SHARE_OF_TIMEOUT = 0.6;

export class PartitionReplica extends DurableObject<Env> {
  readonly #node: StageNode;
  readonly #host: ReplicaHost;
  readonly #tuning: ReplicaTuning;
  readonly #faultsEnabled: boolean;
  #fault: ActiveFault | null;
  #heal = deferred();
  readonly #wake: DelivererWake;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const config = parseFluxConfig(env);
    // A forward gives up well before the router's own deadline, so the router hears why.
    const forwardTimeoutMs = Math.max(1, Math.floor(config.replicaTimeoutMs * FORWARD_SHARE_OF_TIMEOUT));
    this.#wake = new DelivererWake(() => this.#gate(() => this.#node.deliverer.kick()), (atMs) => ctx.storage.setAlarm(atMs));
    const wakeAt = (atMs: number) => this.#wake.wakeAt(atMs);
    const storage = new SqlReplicaStorage(ctx.storage);
    const forwards = forwardPort(env, forwardTimeoutMs, (run) => this.#gate(run));
    this.#node = new StageNode(storage, config, forwards, deliveryPort(env, config.replicaTimeoutMs, wakeAt), () => Date.now());
    this.#host = this.#node.host;
    this.#tuning = config;
    this.#faultsEnabled = config.enableFaults;
    // An injected crash or hang outlives eviction, as a real outage would.
    this.#fault = this.#faultsEnabled ? (ctx.storage.kv.get<ActiveFault>("fault") ?? null) : null;
  }

  async init(msg: InitReplica) {
    return this.#gate(() => this.#host.init(msg));
  }
  /** Primary: logs, forwards to the standby (group commit) and answers once stable. */
  async write(msg: Write) {
    return this.#gate(() => this.#host.write(msg));
  }
  async flush(epoch: number) {
    return this.#gate(() => this.#host.flush(epoch));
  }
  async replicate(msg: Replicate) {
    return this.#gate(() => this.#host.replicate(msg));
  }
  async readLog(epoch: number, fromLsn: number, toLsn: number) {
    return this.#gate(() => this.#host.readLog(epoch, fromLsn, toLsn));
  }
  async readResults(epoch: number, filter: ResultFilter) {
    return this.#gate(() => this.#host.readResults(epoch, filter));
  }
  async status() {
    return this.#gate(() => this.#node.probe());
  }
  /** Stage primary (issue 27): logs a delivery from an upstream partition and answers once stable. */
  async deliver(msg: Deliver) {
    return this.#gate(() => this.#node.deliver(msg));
  }
  /** Primary: one step of a key-group move (issue 28), answered once stable. */
  async moveStep(msg: MoveStepRequest) {
    return this.#gate(() => carryOutMoveStep(this.#host, msg, this.#tuning));
  }
  /** The deliverer's backstop (retries and paced deliveries to stages) when the object was evicted before its timer fired. */
  override async alarm(): Promise<void> {
    // An injected crash or hang stops it as it stops calls; the next probe after a heal kicks the deliverer again.
    if (this.#fault === "crash" || this.#fault === "hang") return;
    await this.#wake.alarmFired();
  }
  async beginSeed(epoch: number) {
    return this.#gate(() => beginSeed(this.#host, epoch));
  }
  async readSeedChunk(epoch: number, id: string, index: number) {
    return this.#gate(() => readSeedChunk(this.#host, epoch, id, index));
  }
  async readOutputPage(epoch: number, afterSeq: number, limit: number) {
    return this.#gate(() => this.#host.readOutputPage(epoch, afterSeq, limit));
  }
  async acceptSeedChunk(id: string, index: number, body: string, spec: DataflowSpec) {
    return this.#gate(() => acceptSeedChunk(this.#host, id, index, body, spec));
  }
  async seedProgress(id: string, chunks: number) {
    return this.#gate(() => seedProgress(this.#host, id, chunks));
  }
  async acceptOutputs(outputs: NumberedOutput[]) {
    return this.#gate(() => acceptOutputs(this.#host, outputs));
  }
  async finishSeed(msg: FinishSeed) {
    return this.#gate(() => finishSeed(this.#host, msg));
  }

  /** Drops all state: the dataflow was deleted. Not gated: a deletion must get through a fault. */
  async destroy(): Promise<void> {
    this.#host.storage.wipe();
    this.#host.forget();
    this.#fault = null;
    this.#heal.resolve();
    this.ctx.storage.kv.delete("fault");
  }

  /** Injects a fault (admin endpoint, only when FLUX_ENABLE_FAULTS is "true"). */
  async injectFault(kind: FaultKind): Promise<{ status: "ok"; fault: ActiveFault | null } | { status: "disabled" }> {
    if (!this.#faultsEnabled) return { status: "disabled" };
    if (kind === "wipe") {
      this.#host.storage.wipe();
      this.#host.forget();
    } else if (kind === "heal") {
      this.#fault = null;
      this.#heal.resolve();
      this.#heal = deferred();
    } else {
      this.#fault = kind;
      if (kind === "crash") this.#host.forget();
    }
    this.ctx.storage.kv.put("fault", this.#fault);
    return { status: "ok", fault: this.#fault };
  }

  /** Applies an injected fault before the call; a no-op unless one was injected. */
  async #gate<T>(run: () => T | Promise<T>): Promise<T> {
    if (this.#fault === "crash") throw new Error(`replica ${this.ctx.id.name ?? "?"} is down (injected crash)`);
    if (this.#fault === "hang") {
      await this.#heal.promise;
      throw new Error("call abandoned: the replica hung (injected) and was healed since");
    }
    if (this.#fault === "slow") await new Promise((resolve) => setTimeout(resolve, SLOW_FAULT_DELAY_MS));
    return run();
  }
}

/** A promise with its resolve function (Promise.withResolvers is newer than our ES2022 lib). */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
