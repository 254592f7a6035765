/**
 * Simulated replicas and network: the real `ReplicaHost` and seeding code over
 * memory storage, reached through calls with random latency, deadlines, duplicated
 * deliveries and injected faults. Implements the router's and the monitor's ports, and
 * the primaries' forwards to their standbys go through the same network.
 */
import { judgeSeq, recordSeq } from "../../shared/dedup.ts";
import type { MonitorPort } from "../../shared/monitor/monitor-port.ts";
import { ReplicaHost } from "../../shared/replica/replica-host.ts";
import { acceptOutputs, acceptSeedChunk, beginSeed, finishSeed, readSeedChunk } from "../../shared/replica/replica-seeding.ts";
import type { ForwardPort } from "../../shared/replica/forwarder.ts";
import type { ReplicaTuning } from "../../shared/replica/replica-state.ts";
import type { ReplicaPort } from "../../shared/router/write-partition.ts";
import type { BatchOutcome, Replicate, Write, WriteReply } from "../../shared/wire/replica-rpc.ts";
import { MemoryReplicaStorage } from "../helpers/memory-replica-storage.ts";
import type { SimClock } from "./sim-clock.ts";
import type { Variant } from "./variants.ts";

export type SimFault = "crash" | "hang" | "slow";
type Rng = { int(n: number): number; chance(p: number): boolean };

interface SimReplica {
  storage: MemoryReplicaStorage;
  host: ReplicaHost | null;
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
  tuning: ReplicaTuning;
  variant: Variant | null;
}

export class SimReplicas {
  readonly replicas = new Map<string, SimReplica>();
  /** (partition@epoch) → replicas that accepted a write in that epoch. */
  readonly writers = new Map<string, Set<string>>();
  /** Replicas whose storage was wiped at some point. */
  readonly wiped = new Set<string>();
  readonly #clock: SimClock;
  readonly #rng: Rng;
  readonly #config: SimNetConfig;
  readonly #trace: (line: string) => void;

  constructor(clock: SimClock, rng: Rng, config: SimNetConfig, trace: (line: string) => void) {
    this.#clock = clock;
    this.#rng = rng;
    this.#config = config;
    this.#trace = trace;
  }

  replica(name: string): SimReplica {
    let r = this.replicas.get(name);
    if (!r) {
      r = { storage: this.#storage(), host: null, fault: null, healed: [] };
      this.replicas.set(name, r);
    }
    return r;
  }

  host(name: string): ReplicaHost {
    const r = this.replica(name);
    return (r.host ??= new ReplicaHost(r.storage, this.#config.tuning, this.#forwardPort()));
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
      r.host?.forget();
      r.host = null;
    } else {
      r.fault = kind;
      if (kind === "crash") {
        r.host?.forget();
        r.host = null;
      }
    }
  }

  /** God's-eye view: whether a replica has durably applied or logged `(producer, seq)`. */
  holds(name: string, producer: string, seq: number): boolean {
    const state = this.host(name).load();
    if (!state) return false;
    return judgeSeq(state.dedup, producer, seq, this.#config.tuning.dedupWindow) === "duplicate" || state.pending.some((e) => e.producer === producer && e.seq === seq);
  }

  /** A port whose calls fail after `deadlineMs` (the caller's deadline) like a real stub with a timeout. */
  port(deadlineMs: number, probeDeadlineMs = deadlineMs): ReplicaPort & MonitorPort {
    const call = <T>(name: string, method: string, run: (host: ReplicaHost, r: SimReplica) => T | Promise<T>, ms = deadlineMs) =>
      this.#call(name, method, run, ms);
    return {
      write: (name, msg) => call(name, "write", (h) => this.#unfenced(h, "primary", () => this.#write(name, h, this.#epochFor(h, msg), msg.epoch))),
      flush: (name, epoch) => call(name, "flush", (h) => this.#unfenced(h, "primary", () => h.flush(this.#epochFor(h, { epoch }).epoch))),
      replicate: (name, msg) => call(name, "replicate", (h) => this.#replicate(h, msg)),
      readLog: (name, epoch, from, to) => call(name, "readLog", (h) => this.#unfenced(h, "primary", () => h.readLog(this.#epochFor(h, { epoch }).epoch, from, to))),
      probe: (name) => call(name, "probe", (h) => h.status(), probeDeadlineMs),
      configure: (name, msg) => call(name, "configure", (h) => h.init(msg)),
      beginSeed: (name, epoch) => call(name, "beginSeed", (h) => beginSeed(h, epoch)),
      readSeedChunk: (name, epoch, id, index) => call(name, "readSeedChunk", (h) => readSeedChunk(h, epoch, id, index)),
      acceptSeedChunk: (name, id, index, body) => call(name, "acceptSeedChunk", (h) => acceptSeedChunk(h, id, index, body)),
      readOutputPage: (name, epoch, after, limit) => call(name, "readOutputPage", (h) => h.readOutputPage(epoch, after, limit)),
      acceptOutputs: (name, outputs) => call(name, "acceptOutputs", (h) => acceptOutputs(h, outputs)),
      finishSeed: (name, msg) => call(name, "finishSeed", (h) => finishSeed(h, msg)),
    };
  }

  /** A primary's forwards: through the simulated network, with their own deadline. */
  #forwardPort(): ForwardPort {
    return {
      replicate: async (standby, msg) => {
        if (this.#config.variant !== "early-group-ack" || msg.entries.length < 2) return this.#call(standby, "replicate", (h) => this.#replicate(h, msg), this.#config.forwardDeadlineMs);
        // The broken variant: only the first half of the group reaches the standby, yet the whole group counts as held.
        const half = { ...msg, entries: msg.entries.slice(0, Math.ceil(msg.entries.length / 2)), upToLsn: 0 };
        const reply = await this.#call(standby, "replicate", (h) => this.#replicate(h, half), this.#config.forwardDeadlineMs);
        return reply.status === "ok" || reply.status === "gap" ? { status: "ok", lsn: msg.upToLsn } : reply;
      },
    };
  }

  #replicate(host: ReplicaHost, msg: Replicate) {
    return this.#unfenced(host, "standby", () => host.replicate(this.#rewriteReplicate(host, this.#epochFor(host, msg))));
  }

  async #call<T>(name: string, method: string, run: (host: ReplicaHost, r: SimReplica) => T | Promise<T>, deadlineMs: number): Promise<T> {
    const deadline = this.#clock.timer(deadlineMs);
    const work = (async () => {
      await this.#clock.sleep(1 + this.#rng.int(this.#config.maxLatencyMs));
      const r = this.replica(name);
      if (r.fault === "crash") throw new Error(`${name} is down`);
      if (r.fault === "hang") {
        await new Promise<void>((wake) => r.healed.push(wake));
        throw new Error(`${name} hung`);
      }
      if (r.fault === "slow") await this.#clock.sleep(this.#config.slowMs);
      const reply = await run(this.host(name), r);
      if (this.#rng.chance(this.#config.duplicateChance)) {
        // The same message delivered again a little later; its reply is lost.
        void this.#clock.sleep(1 + this.#rng.int(4 * this.#config.maxLatencyMs)).then(() => {
          const again = this.replica(name);
          if (again.fault === null) {
            try {
              void Promise.resolve(run(this.host(name), again)).catch(() => undefined);
            } catch {
              // a duplicate that fails changes nothing the caller sees
            }
          }
        });
      }
      await this.#clock.sleep(1 + this.#rng.int(this.#config.maxLatencyMs));
      return reply;
    })();
    try {
      return await Promise.race([work, deadline.promise.then(() => Promise.reject(new Error(`${name} ${method}: deadline`)))]);
    } finally {
      deadline.cancel();
      work.catch(() => undefined);
    }
  }

  #write(name: string, host: ReplicaHost, msg: Write, sentEpoch: number): Promise<WriteReply> {
    const variant = this.#config.variant;
    const early = variant === "early-duplicate-answer" ? this.#earlyDuplicates(host, msg) : null;
    // The write's logging step runs synchronously inside `host.write`, so a variant that
    // swaps state around that call changes only how this write is judged.
    const written = variant === "unstable-outputs" ? this.#writeUnstable(host, msg) : variant === "no-dedup" ? this.#writeWithoutDedup(host, msg) : host.write(msg);
    return written.then((reply) => {
      if (reply.status === "ok" && reply.results.some((r) => r.status === "applied")) {
        const key = `${host.status()?.partition ?? -1}@${sentEpoch}`;
        const set = this.writers.get(key) ?? new Set<string>();
        set.add(name);
        this.writers.set(key, set);
      }
      if (!early || reply.status !== "ok") return reply;
      return { ...reply, results: reply.results.map((r, i) => early[i] ?? r) };
    });
  }

  /** The early-duplicate-answer variant: a resent batch whose entry is still pending is answered at once. */
  #earlyDuplicates(host: ReplicaHost, msg: Write): (BatchOutcome | null)[] {
    const state = host.load();
    return msg.batches.map((b) => {
      const entry = state?.pending.find((e) => e.producer === b.producer && e.seq === b.seq);
      return entry ? { status: "duplicate" as const, lsn: entry.lsn, replicated: true } : null;
    });
  }

  /** The no-dedup variant: the primary judges every batch against empty dedup state. */
  #writeWithoutDedup(host: ReplicaHost, msg: Write): Promise<WriteReply> {
    const state = host.load();
    if (!state) return host.write(msg);
    const { dedup, pending } = state;
    state.dedup = {};
    state.pending = [];
    try {
      return host.write(msg);
    } finally {
      for (const entry of state.pending) pending.push(entry);
      for (const b of msg.batches) if (Object.keys(state.dedup).length > 0) recordSeq(dedup, b.producer, b.seq, this.#config.tuning.dedupWindow);
      state.dedup = dedup;
      state.pending = pending;
    }
  }

  /**
   * The unstable-outputs variant: the primary applies (and emits from) a batch at once, as
   * if it had no standby, while its log is still kept for the standby as usual.
   */
  #writeUnstable(host: ReplicaHost, msg: Write): Promise<WriteReply> {
    const meta = host.load()?.meta;
    if (!meta?.hasStandby) return host.write(msg);
    const hold = meta.holdLogAfterLsn;
    const standby = meta.standby;
    meta.hasStandby = false;
    meta.standby = null;
    meta.holdLogAfterLsn = Math.min(hold ?? Number.POSITIVE_INFINITY, meta.standbyAckLsn);
    try {
      return host.write(msg);
    } finally {
      meta.hasStandby = true;
      meta.standby = standby;
      meta.holdLogAfterLsn = hold;
    }
  }

  /** The no-fencing variant: every call is taken as coming from the replica's own epoch... */
  #epochFor<M extends { epoch: number }>(host: ReplicaHost, msg: M): M {
    if (this.#config.variant !== "no-fencing") return msg;
    const epoch = host.status()?.epoch;
    return epoch === undefined ? msg : { ...msg, epoch };
  }

  /** ...and served whatever role the replica holds (its role is swapped in for the call). */
  #unfenced<T>(host: ReplicaHost, role: "primary" | "standby", run: () => T): T {
    const state = this.#config.variant === "no-fencing" ? host.load() : null;
    if (!state || state.meta.role === role || state.meta.role === "retired") return run();
    const held = state.meta.role;
    state.meta.role = role;
    try {
      return run();
    } finally {
      if (state.meta.role === role) state.meta.role = held;
    }
  }

  /** The out-of-order-standby variant: entries past a gap are renumbered to follow what the standby holds. */
  #rewriteReplicate(host: ReplicaHost, msg: Parameters<ReplicaHost["replicate"]>[0]) {
    if (this.#config.variant !== "out-of-order-standby") return msg;
    const held = host.status()?.lsn ?? 0;
    const first = msg.entries[0];
    if (!first || first.lsn <= held + 1) return msg;
    const entries = msg.entries.map((e, i) => ({ ...e, lsn: held + 1 + i }));
    return { ...msg, entries, upToLsn: Math.min(msg.upToLsn, held + entries.length) };
  }

  #storage(): MemoryReplicaStorage {
    const storage = new MemoryReplicaStorage();
    if (this.#config.variant === "early-log-trim") {
      const persist = storage.persist.bind(storage);
      storage.persist = (meta, effects) => persist(meta, { ...effects, trimLogThrough: meta.appliedLsn });
    }
    return storage;
  }
}
