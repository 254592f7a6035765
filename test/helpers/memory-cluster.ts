/**
 * Replicas of the real `ReplicaHost` over memory, reachable through the same ports the
 * Worker and the monitor use (`ReplicaPort`, `MonitorPort`), so router, replica and
 * monitor logic run together in Node. Faults make calls fail as a dead, hung or slow
 * Durable Object would (a missed deadline and an error look the same to callers).
 */
import type { MonitorPort } from "../../shared/monitor/monitor-port.ts";
import { desiredConfigs } from "../../shared/monitor/desired-config.ts";
import { ReplicaHost } from "../../shared/replica/replica-host.ts";
import { acceptOutputs, acceptSeedChunk, beginSeed, finishSeed, readSeedChunk } from "../../shared/replica/replica-seeding.ts";
import type { ReplicaTuning } from "../../shared/replica/replica-state.ts";
import type { ReplicaPort } from "../../shared/router/write-partition.ts";
import type { DataflowRecord } from "../../shared/wire/routing.ts";
import { MemoryReplicaStorage } from "./memory-replica-storage.ts";

/** A fault that makes every call to a replica fail until healed. */
export type MemoryFault = "crash" | "hang" | "slow";

export class MemoryCluster implements ReplicaPort, MonitorPort {
  readonly storages = new Map<string, MemoryReplicaStorage>();
  readonly hosts = new Map<string, ReplicaHost>();
  readonly faults = new Map<string, MemoryFault>();
  /** Called before every replica call; return a promise to delay it. */
  beforeCall: (replica: string, method: string) => Promise<void> | void = () => {};

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
    if (fault) throw new Error(`replica ${name} (${method}): ${fault === "crash" ? "down" : "did not answer in time"}`);
    return run(this.host(name));
  }

  write: ReplicaPort["write"] = (name, msg) => this.#call(name, "write", (h) => h.write(msg));
  replicate: MonitorPort["replicate"] = (name, msg) => this.#call(name, "replicate", (h) => h.replicate(msg));
  readLog: MonitorPort["readLog"] = (name, epoch, from, to) => this.#call(name, "readLog", (h) => h.readLog(epoch, from, to));
  flush: MonitorPort["flush"] = (name, epoch) => this.#call(name, "flush", (h) => h.flush(epoch));

  probe: MonitorPort["probe"] = (name) => this.#call(name, "probe", (h) => h.status());
  configure: MonitorPort["configure"] = (name, msg) => this.#call(name, "configure", (h) => h.init(msg));
  beginSeed: MonitorPort["beginSeed"] = (name, epoch) => this.#call(name, "beginSeed", (h) => beginSeed(h, epoch));
  readSeedChunk: MonitorPort["readSeedChunk"] = (name, epoch, id, index) =>
    this.#call(name, "readSeedChunk", (h) => readSeedChunk(h, epoch, id, index));
  acceptSeedChunk: MonitorPort["acceptSeedChunk"] = (name, id, index, body) =>
    this.#call(name, "acceptSeedChunk", (h) => acceptSeedChunk(h, id, index, body));
  readOutputPage: MonitorPort["readOutputPage"] = (name, epoch, after, limit) =>
    this.#call(name, "readOutputPage", (h) => h.readOutputPage(epoch, after, limit));
  acceptOutputs: MonitorPort["acceptOutputs"] = (name, outputs) => this.#call(name, "acceptOutputs", (h) => acceptOutputs(h, outputs));
  finishSeed: MonitorPort["finishSeed"] = (name, msg) => this.#call(name, "finishSeed", (h) => finishSeed(h, msg));
}
