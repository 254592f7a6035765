/**
 * Simulated replicas and network: the real `StageNode` (a `ReplicaHost` with the exchange
 * between stages layered on) and seeding code over memory storage, reached through calls
 * with random latency, deadlines, duplicated deliveries and injected faults. Implements
 * the router's and the monitor's ports; the primaries' forwards to their standbys and
 * upstream primaries' deliveries to stages go through the same network.
 */
import { judgeSeq } from "../../shared/dedup.ts";
import type { MonitorPort } from "../../shared/monitor/monitor-port.ts";
import type { ReplicaHost } from "../../shared/replica/replica-host.ts";
import type { DeliveryPort, ExchangeLimits, ReaderRoute } from "../../shared/stages/deliverer.ts";
import { StageNode } from "../../shared/stages/stage-node.ts";
import { carryOutMoveStep } from "../../shared/moves/move-step.ts";
import { acceptOutputs, acceptSeedChunk, beginSeed, finishSeed, readSeedChunk, seedProgress } from "../../shared/replica/replica-seeding.ts";
import type { ReplicaState, ReplicaTuning } from "../../shared/replica/replica-state.ts";
import type { ReplicaPort } from "../../shared/router/write-partition.ts";
import { MemoryReplicaStorage } from "../helpers/memory-replica-storage.ts";
import type { ForwardPort } from "../../shared/replica/forwarder.ts";
import type { Deliver, Replicate, ReplicaStatus, WriteReply } from "../../shared/wire/replica-rpc.ts";
import type { SimClock } from "./sim-clock.ts";
import type { StableHistory } from "./stable-history.ts";
import type { VariantHooks, Wrap } from "./variant-hooks.ts";
import { InjectedFailure, RecordedError, type Violations } from "./violations.ts";

export type SimFault = "crash" | "hang" | "slow";
/** A replica's own later step gives up after this (nobody waits for it: it only has to end). */
const LATER_DEADLINE_MS = 1_000;
type Rng = { int(n: number): number; chance(p: number): boolean };

interface SimReplica {
  storage: MemoryReplicaStorage;
  node: StageNode | null;
  fault: SimFault | null;
  healed: Array<() => void>;
}

/** Network and replica settings of a run. */
export interface SimNetConfig {
  maxLatencyMs: number;
  slowMs: number;
  duplicateChance: number;
  /** A primary's forward to its standby gives up after this, ms. */
  forwardDeadlineMs: number;
  tuning: ReplicaTuning & ExchangeLimits;
}

/** What replicas call on monitors in the simulator (issue 29: each dataflow's own). */
interface SimMonitorCalls {
  readerRoutes(ids: readonly string[]): ReaderRoute[];
  /** An upstream primary's delivery to `replica` failed. */
  reportFailure(replica: string): void;
}

export class SimReplicas {
  readonly replicas = new Map<string, SimReplica>();
  /** (dataflow/partition@epoch) → replicas that accepted a write (a batch or a delivery) in that epoch. */
  readonly writers = new Map<string, Set<string>>();
  /** Replicas whose storage was wiped at some point. */
  readonly wiped = new Set<string>();
  readonly #clock: SimClock;
  readonly #rng: Rng;
  readonly #config: SimNetConfig;
  readonly #trace: (line: string) => void;
  readonly #hooks: VariantHooks;
  readonly #violations: Violations;
  readonly #history: StableHistory;
  readonly #brokenLoads = new Set<string>();
  /** Operators a variant's `operator` hook already replaced. */
  readonly #patched = new WeakSet<object>();
  readonly #monitors: SimMonitorCalls;

  /** @param monitors what an upstream primary asks of its readers' monitors (readers' routing: throws while one is down) and tells them (a failed delivery). */
  constructor(
    clock: SimClock,
    rng: Rng,
    config: SimNetConfig,
    checks: { hooks: VariantHooks; violations: Violations; history: StableHistory; trace: (line: string) => void },
    monitors: SimMonitorCalls,
  ) {
    this.#monitors = monitors;
    this.#clock = clock;
    this.#rng = rng;
    this.#config = config;
    this.#trace = checks.trace;
    this.#hooks = checks.hooks;
    this.#violations = checks.violations;
    this.#history = checks.history;
  }

  replica(name: string): SimReplica {
    let r = this.replicas.get(name);
    if (!r) {
      r = { storage: this.#storage(), node: null, fault: null, healed: [] };
      this.replicas.set(name, r);
    }
    return r;
  }

  host(name: string): ReplicaHost {
    return this.node(name).host;
  }

  /** The replica with its exchange layer (its deliverer, its answers to deliveries). */
  node(name: string): StageNode {
    const r = this.replica(name);
    return (r.node ??= new StageNode(r.storage, this.#config.tuning, this.#forwardPort(name), this.#deliveryPort(name), () => this.#clock.now));
  }

  inject(name: string, kind: SimFault | "wipe" | "heal"): void {
    const r = this.replica(name);
    this.#trace(`fault ${kind} ${name}`);
    if (kind === "heal") {
      r.fault = null;
      for (const wake of r.healed.splice(0)) wake();
    } else if (kind === "wipe") {
      this.wiped.add(name);
      r.storage.wipe();
      // Memory goes with it: an in-flight forward's reply must not write the old state back.
      r.node?.host.forget();
      r.node = null;
    } else {
      r.fault = kind;
      if (kind === "crash") {
        r.node?.host.forget();
        r.node = null;
      }
    }
  }

  /**
   * God's-eye view of a replica's state (null: none). Loading runs product code (a restart
   * restores from storage); an error it throws is a violation, recorded once per replica.
   */
  peek(name: string): ReplicaState | null {
    try {
      const state = this.host(name).load();
      const patch = this.#hooks.operator;
      if (state && patch && !this.#patched.has(state.operator)) {
        state.operator = patch(state.operator, state.meta.spec);
        this.#patched.add(state.operator);
      }
      return state;
    } catch (err) {
      if (!this.#brokenLoads.has(name)) this.#violations.exception(`loading ${name}`, err);
      this.#brokenLoads.add(name);
      return null;
    }
  }

  /** God's-eye view of a replica that is up and holds memory (no load, so no side effects): its state, or null. */
  live(name: string): ReplicaState | null {
    const r = this.replicas.get(name);
    return r?.node && r.fault === null ? this.peek(name) : null;
  }

  /** God's-eye status of a replica (null: no state, or it cannot load). */
  status(name: string): ReplicaStatus | null {
    return this.peek(name) ? this.host(name).status() : null;
  }

  /** God's-eye view: whether a replica has durably applied or logged `(producer, seq)` (in its own dedup memory, or one that came with moved key groups). */
  holds(name: string, producer: string, seq: number): boolean {
    const state = this.peek(name);
    if (!state) return false;
    const judges = [state.dedup, ...state.moves.inherited.map((segment) => segment.dedup)];
    return judges.some((dedup) => judgeSeq(dedup, producer, seq, this.#config.tuning.dedupWindow) === "duplicate") || state.pending.some((e) => e.producer === producer && e.seq === seq);
  }

  /** A port whose calls fail after `deadlineMs` (the caller's deadline) like a real stub with a timeout. */
  port(deadlineMs: number, probeDeadlineMs = deadlineMs): ReplicaPort & MonitorPort {
    const call = <T>(name: string, method: string, run: (host: ReplicaHost) => T | Promise<T>, ms = deadlineMs) => this.#call(name, method, (n) => run(n.host), ms);
    const hooks = this.#hooks;
    return {
      write: (name, msg) => call(name, "write", (h) => this.#wrote(name, h, msg.epoch, hooked(hooks.write, h, msg, (m) => h.write(m)))),
      flush: (name, epoch) => call(name, "flush", (h) => hooked(hooks.flush, h, { epoch }, (m) => h.flush(m.epoch))),
      replicate: (name, msg) => call(name, "replicate", (h) => this.#replicate(h, msg)),
      readLog: (name, epoch, fromLsn, toLsn) =>
        call(name, "readLog", (h) => hooked(hooks.readLog, h, { epoch, fromLsn, toLsn }, (m) => h.readLog(m.epoch, m.fromLsn, m.toLsn))),
      probe: (name) => this.#call(name, "probe", (n) => n.probe(), probeDeadlineMs),
      configure: (name, msg) => call(name, "configure", (h) => h.init(msg)),
      beginSeed: (name, epoch) => call(name, "beginSeed", (h) => beginSeed(h, epoch)),
      readSeedChunk: (name, epoch, id, index) => call(name, "readSeedChunk", (h) => readSeedChunk(h, epoch, id, index)),
      acceptSeedChunk: (name, id, index, body, spec) => call(name, "acceptSeedChunk", (h) => acceptSeedChunk(h, id, index, body, spec)),
      seedProgress: (name, snapshot, chunks) =>
        call(name, "seedProgress", (h) => hooked(hooks.seedProgress, h, { snapshot, chunks }, (m) => seedProgress(h, m.snapshot, m.chunks))),
      readOutputPage: (name, epoch, afterSeq, limit) =>
        call(name, "readOutputPage", (h) => hooked(hooks.readOutputPage, h, { epoch, afterSeq, limit }, (m) => h.readOutputPage(m.epoch, m.afterSeq, m.limit))),
      acceptOutputs: (name, outputs) => call(name, "acceptOutputs", (h) => acceptOutputs(h, outputs)),
      finishSeed: (name, msg) => call(name, "finishSeed", (h) => hooked(hooks.finishSeed, h, msg, (m) => finishSeed(h, m))),
      moveStep: (name, msg) => call(name, "moveStep", (h) => hooked(hooks.moveStep, h, msg, (m) => carryOutMoveStep(h, m, this.#config.tuning))),
    };
  }

  /**
   * A primary's forwards: through the simulated network, with their own deadline. Its own
   * later steps (a spread close's entries) run like a call to it: after a delay, not while
   * it is down or hung, an error they throw recorded.
   */
  #forwardPort(name: string): ForwardPort {
    const send = (standby: string, msg: Replicate) => this.#call(standby, "replicate", (n) => this.#replicate(n.host, msg), this.#config.forwardDeadlineMs);
    const forward = this.#hooks.forward;
    const later = this.#hooks.later;
    return {
      replicate: (standby, msg) => (forward ? forward(standby, msg, (m) => send(standby, m)) : send(standby, msg)),
      later: <T>(step: () => T) => this.#call(name, "close step", (n) => (later ? later(n.host, step) : step()), LATER_DEADLINE_MS),
    };
  }

  /**
   * An upstream primary's deliveries to stages (issue 27): through the network with the
   * forward deadline; its wake-ups run like its own later steps (not while it is down).
   * Outputs a stage cannot read are a violation: the simulator's specs read every output.
   */
  #deliveryPort(name: string): DeliveryPort {
    const deliver = this.#hooks.deliver;
    const accept = async (n: StageNode, msg: Deliver) => {
      const reply = await (deliver ? deliver(n, msg, (m) => n.deliver(m)) : n.deliver(msg));
      if (reply.status === "accepted") this.#noteWriter(n.host.status()?.name ?? "?", n.host, msg.epoch);
      return reply;
    };
    const send = (replica: string, msg: Deliver) => this.#call(replica, "deliver", (n) => accept(n, msg), this.#config.forwardDeadlineMs);
    return {
      readers: async (ids) => this.#monitors.readerRoutes(ids),
      deliver: (replica, msg) => (this.#hooks.sendDelivery ? this.#hooks.sendDelivery(this.live(name), msg, (m) => send(replica, m)) : send(replica, msg)),
      reportFailure: (replica) => this.#monitors.reportFailure(replica),
      wakeAt: (atMs) =>
        void this.#clock.sleep(Math.max(0, atMs - this.#clock.now)).then(() => this.#call(name, "deliverer wake", (n) => n.deliverer.kick(), LATER_DEADLINE_MS).catch(() => undefined)),
      warn: (message) => this.#violations.add("exception", `${name} (exchange): ${message}`),
    };
  }

  #replicate(host: ReplicaHost, msg: Replicate) {
    return hooked(this.#hooks.replicate, host, msg, (m) => host.replicate(m));
  }

  async #call<T>(name: string, method: string, run: (node: StageNode) => T | Promise<T>, deadlineMs: number): Promise<T> {
    const deadline = this.#clock.timer(deadlineMs);
    const work = (async () => {
      await this.#clock.sleep(1 + this.#rng.int(this.#config.maxLatencyMs));
      const r = this.replica(name);
      if (r.fault === "crash") throw new InjectedFailure(`${name} is down`);
      if (r.fault === "hang") {
        await new Promise<void>((wake) => r.healed.push(wake));
        throw new InjectedFailure(`${name} hung`);
      }
      if (r.fault === "slow") await this.#clock.sleep(this.#config.slowMs);
      const reply = await this.#serve(name, method, run);
      if (this.#rng.chance(this.#config.duplicateChance)) {
        // The same message delivered again a little later; its reply is lost.
        void this.#clock.sleep(1 + this.#rng.int(4 * this.#config.maxLatencyMs)).then(() => {
          if (this.replica(name).fault === null) {
            try {
              void this.#serve(name, `${method} (delivered again)`, run).catch(() => undefined);
            } catch {
              // recorded by #serve; nobody waits for this reply
            }
          }
        });
      }
      await this.#clock.sleep(1 + this.#rng.int(this.#config.maxLatencyMs));
      return reply;
    })();
    try {
      return await Promise.race([work, deadline.promise.then(() => Promise.reject(new InjectedFailure(`${name} ${method}: deadline`)))]);
    } finally {
      deadline.cancel();
      work.catch(() => undefined);
    }
  }

  /** Runs the real replica code; an error it throws is a violation (the simulator injects none there), and fails the call. */
  #serve<T>(name: string, method: string, run: (node: StageNode) => T | Promise<T>): Promise<T> {
    const thrown = (err: unknown): never => {
      this.#violations.exception(`replica ${name} ${method}`, err);
      throw new RecordedError(`${name} ${method} threw`, { cause: err });
    };
    try {
      return Promise.resolve(run(this.node(name))).catch(thrown);
    } catch (err) {
      return thrown(err);
    }
  }

  /** Remembers which replicas accepted a write in which partition@epoch (the caller's epoch). */
  async #wrote(name: string, host: ReplicaHost, sentEpoch: number, written: Promise<WriteReply>): Promise<WriteReply> {
    const reply = await written;
    if (reply.status === "ok" && reply.results.some((r) => r.status === "applied")) this.#noteWriter(name, host, sentEpoch);
    return reply;
  }

  /** Remembers that `name` accepted a write (a batch, or a stage's delivery) at `epoch`. */
  #noteWriter(name: string, host: ReplicaHost, epoch: number): void {
    const status = host.status();
    const key = `${status?.dataflowId ?? "?"}/${status?.partition ?? -1}@${epoch}`;
    const set = this.writers.get(key) ?? new Set<string>();
    set.add(name);
    this.writers.set(key, set);
  }

  #storage(): MemoryReplicaStorage {
    const storage = new MemoryReplicaStorage();
    this.#hooks.storage?.(storage, this.#config.tuning.dedupWindow);
    this.#history.watch(storage);
    return storage;
  }
}

/** Runs `run(msg)` through a variant's hook, if it has one for this call. */
function hooked<M, R>(wrap: Wrap<M, R> | undefined, host: ReplicaHost, msg: M, run: (msg: M) => R): R {
  return wrap ? wrap(host, msg, run) : run(msg);
}
