/**
 * Replicas of the real `ReplicaHost` over memory, reachable through the same
 * `ReplicaPort` the Worker uses, so router and replica logic run together in Node.
 * Calls can be delayed so that concurrent writes interleave.
 */
import { ReplicaHost } from "../../shared/replica/replica-host.ts";
import type { ReplicaTuning } from "../../shared/replica/replica-state.ts";
import type { ReplicaPort } from "../../shared/router/write-partition.ts";
import { desiredConfigs } from "../../shared/monitor/desired-config.ts";
import type { DataflowRecord } from "../../shared/wire/routing.ts";
import { MemoryReplicaStorage } from "./memory-replica-storage.ts";

export class MemoryCluster implements ReplicaPort {
  readonly storages = new Map<string, MemoryReplicaStorage>();
  readonly hosts = new Map<string, ReplicaHost>();
  /** Called before every replica call; return a promise to delay it. */
  beforeCall: (replica: string, method: string) => Promise<void> | void = () => {};

  constructor(readonly tuning: ReplicaTuning) {}

  /** Initialises every replica of a dataflow record, as the coordinator does. */
  setUp(record: DataflowRecord): void {
    for (const route of record.routes) for (const init of desiredConfigs(record, route)) this.host(init.name).init(init);
  }

  /** The host for `name`, created over fresh storage on first use. */
  host(name: string): ReplicaHost {
    let host = this.hosts.get(name);
    if (!host) {
      let storage = this.storages.get(name);
      if (!storage) this.storages.set(name, (storage = new MemoryReplicaStorage()));
      host = new ReplicaHost(storage, this.tuning);
      this.hosts.set(name, host);
    }
    return host;
  }

  /** Drops a replica's memory; its storage survives, as after an eviction. */
  restart(name: string): void {
    this.hosts.delete(name);
  }

  applyBatch: ReplicaPort["applyBatch"] = async (name, msg) => (await this.#gate(name, "applyBatch"), this.host(name).applyBatch(msg));
  replicate: ReplicaPort["replicate"] = async (name, msg) => (await this.#gate(name, "replicate"), this.host(name).replicate(msg));
  ackStandby: ReplicaPort["ackStandby"] = async (name, msg) => (await this.#gate(name, "ackStandby"), this.host(name).ackStandby(msg));
  readLog: ReplicaPort["readLog"] = async (name, epoch, from, to) => (await this.#gate(name, "readLog"), this.host(name).readLog(epoch, from, to));

  async #gate(name: string, method: string): Promise<void> {
    await this.beforeCall(name, method);
  }
}
