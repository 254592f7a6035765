/**
 * Replicas of the real `ReplicaHost` over memory, reachable through the same ports the
 * Worker and the monitor use (`ReplicaPort`, `MonitorPort`), so router, replica and
 * monitor logic run together in Node. Faults make calls fail as a dead, hung or slow
 * Durable Object would (a missed deadline and an error look the same to callers): a
 * crashed or hung replica never runs the call; a slow one runs it, but its answer misses
 * the caller's deadline, so the call took effect while the caller saw it fail.
 */
import type { MonitorLog } from "../../shared/monitor/monitor-errors.ts";
import type { MonitorPort } from "../../shared/monitor/monitor-port.ts";
import { desiredConfigs } from "../../shared/monitor/desired-config.ts";
import { ReplicaHost } from "../../shared/replica/replica-host.ts";
import { carryOutMoveStep } from "../../shared/moves/move-step.ts";
import { acceptOutputs, acceptSeedChunk, beginSeed, finishSeed, readSeedChunk, seedProgress } from "../../shared/replica/replica-seeding.ts";
import type { ReplicaTuning } from "../../shared/replica/replica-state.ts";
import type { ReplicaPort } from "../../shared/router/write-partition.ts";
import type { DataflowRecord } from "../../shared/wire/routing.ts";
import { MemoryReplicaStorage } from "./memory-replica-storage.ts";

/** A monitor log for tests: a monitor error that is not a failed replica call is a bug, so it fails the test. */
export const FAIL_ON_MONITOR_ERROR: MonitorLog = {
  error: (context, err) => {
    throw new Error(`monitor error in ${context}`, { cause: err });
  },
};

/** A fault that makes every call to a replica fail until healed. */
export type MemoryFault = "crash" | "hang" | "slow";

export class MemoryCluster implements ReplicaPort, MonitorPort {
  readonly storages = new Map<string, MemoryReplicaStorage>();
  readonly hosts = new Map<string, ReplicaHost>();
  readonly faults = new Map<string, MemoryFault>();
  /** Called before every replica call; return a promise to delay it, throw to fail it before it runs. */
  beforeCall: (replica: string, method: string) => Promise<void> | void = () => {};
  /** Errors thrown by the replica code itself (never by an injected fault): each one is a bug. */
  readonly errors: unknown[] = [];
  /** Called after a replica call took effect; throw to lose its reply. */
  afterCall: (replica: string, method: string) => void = () => {};

  readonly tuning: ReplicaTuning;

  constructor(tuning: ReplicaTuning) {
    this.tuning = tuning;
  }

  /** Initialises every replica of a dataflow record, as the coordinator does. */
  setUp(record: DataflowRecord): void {
    for (const route of record.routes) for (const init of desiredConfigs(record, route)) this.host(init.name).init({ ...init, create: true });
  }

  /** The host for `name`, created over fresh storage on first use. */
  host(name: string): ReplicaHost {
    let host = this.hosts.get(name);
    if (!host) {
      let storage = this.storages.get(name);
      if (!storage) this.storages.set(name, (storage = new MemoryReplicaStorage()));
      host = new ReplicaHost(storage, this.tuning, { replicate: (standby, msg) => this.replicate(standby, msg) });
      this.hosts.set(name, host);
    }
    return host;
  }

  /** Drops a replica's memory; its storage survives, as after an eviction. */
  restart(name: string): void {
    this.hosts.get(name)?.forget();
    this.hosts.delete(name);
  }

  /** Injects a fault (`wipe` loses storage at once; `heal` clears a fault). */
  inject(name: string, kind: MemoryFault | "wipe" | "heal"): void {
    if (kind === "heal") this.faults.delete(name);
    else if (kind === "wipe") {
      this.storages.get(name)?.wipe();
      this.restart(name);
    } else {
      this.faults.set(name, kind);
      if (kind === "crash") this.restart(name);
    }
  }

  async #call<T>(name: string, method: string, run: (host: ReplicaHost) => T | Promise<T>): Promise<T> {
    await this.beforeCall(name, method);
    const fault = this.faults.get(name);
    if (fault === "crash" || fault === "hang") throw new Error(`replica ${name} (${method}): ${fault === "crash" ? "down" : "did not answer in time"}`);
    let reply: T;
    try {
      reply = await run(this.host(name));
    } catch (err) {
      // Product code threw: the caller sees a failed call, tests see the error itself.
      this.errors.push(err);
      throw err;
    }
    if (fault === "slow") throw new Error(`replica ${name} (${method}): answered after the deadline`);
    this.afterCall(name, method);
    return reply;
  }

  write: ReplicaPort["write"] = (name, msg) => this.#call(name, "write", (h) => h.write(msg));
  replicate: MonitorPort["replicate"] = (name, msg) => this.#call(name, "replicate", (h) => h.replicate(msg));
  readLog: MonitorPort["readLog"] = (name, epoch, from, to) => this.#call(name, "readLog", (h) => h.readLog(epoch, from, to));
  flush: MonitorPort["flush"] = (name, epoch) => this.#call(name, "flush", (h) => h.flush(epoch));

  probe: MonitorPort["probe"] = (name) => this.#call(name, "probe", (h) => h.probe());
  configure: MonitorPort["configure"] = (name, msg) => this.#call(name, "configure", (h) => h.init(msg));
  beginSeed: MonitorPort["beginSeed"] = (name, epoch) => this.#call(name, "beginSeed", (h) => beginSeed(h, epoch));
  readSeedChunk: MonitorPort["readSeedChunk"] = (name, epoch, id, index) =>
    this.#call(name, "readSeedChunk", (h) => readSeedChunk(h, epoch, id, index));
  acceptSeedChunk: MonitorPort["acceptSeedChunk"] = (name, id, index, body, spec) =>
    this.#call(name, "acceptSeedChunk", (h) => acceptSeedChunk(h, id, index, body, spec));
  seedProgress: MonitorPort["seedProgress"] = (name, id, chunks) => this.#call(name, "seedProgress", (h) => seedProgress(h, id, chunks));
  readOutputPage: MonitorPort["readOutputPage"] = (name, epoch, after, limit) =>
    this.#call(name, "readOutputPage", (h) => h.readOutputPage(epoch, after, limit));
  acceptOutputs: MonitorPort["acceptOutputs"] = (name, outputs) => this.#call(name, "acceptOutputs", (h) => acceptOutputs(h, outputs));
  finishSeed: MonitorPort["finishSeed"] = (name, msg) => this.#call(name, "finishSeed", (h) => finishSeed(h, msg));
  moveStep: MonitorPort["moveStep"] = (name, msg) => this.#call(name, "moveStep", (h) => carryOutMoveStep(h, msg, this.tuning));
}
