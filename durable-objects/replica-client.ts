/**
 * Calls to replica Durable Objects with deadlines, as the ports the shared protocol
 * code expects: `ReplicaPort` for routers, `MonitorPort` for the monitor. A call that
 * misses its deadline rejects, exactly like one that failed.
 */
import type { LocationHint } from "../shared/config.ts";
import type { MonitorPort } from "../shared/monitor/monitor-port.ts";
import type { ReplicaPort } from "../shared/router/write-partition.ts";

/**
 * Runs `call` and rejects when it has not settled within `ms`. `call` is an async function
 * so that a stub's union of promise types settles into one promise of a union.
 */
export function withDeadline<T>(call: () => Promise<T>, ms: number, what: string): Promise<T> {
  const promise = call();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => {
    if (timer !== undefined) clearTimeout(timer);
  });
}

type HintOf = (name: string) => string | null | undefined;

function stubFor(env: Env, hintOf: HintOf) {
  return (name: string) => {
    const hint = hintOf(name);
    return env.PARTITION_REPLICA.getByName(name, hint ? { locationHint: hint as LocationHint } : undefined);
  };
}

/** Replica RPCs for routers, each bounded by `timeoutMs`. */
export function replicaPort(env: Env, timeoutMs: number): ReplicaPort {
  const stub = stubFor(env, () => null);
  const call = <T>(name: string, method: string, run: () => Promise<T>): Promise<T> => withDeadline(run, timeoutMs, `replica ${name} (${method})`);
  return {
    applyBatch: (name, msg) => call(name, "applyBatch", async () => stub(name).applyBatch(msg)),
    replicate: (name, msg) => call(name, "replicate", async () => stub(name).replicate(msg)),
    ackStandby: (name, msg) => call(name, "ackStandby", async () => stub(name).ackStandby(msg)),
    readLog: (name, epoch, from, to) => call(name, "readLog", async () => stub(name).readLog(epoch, from, to)),
  };
}

/** Replica RPCs for the monitor: probes bounded by `probeTimeoutMs`, the rest by `callTimeoutMs`. */
export function monitorPort(env: Env, probeTimeoutMs: number, callTimeoutMs: number, hintOf: HintOf): MonitorPort {
  const stub = stubFor(env, hintOf);
  const call = <T>(name: string, method: string, run: () => Promise<T>): Promise<T> => withDeadline(run, callTimeoutMs, `replica ${name} (${method})`);
  return {
    probe: (name) => withDeadline(async () => stub(name).status(), probeTimeoutMs, `replica ${name} (probe)`),
    configure: (name, msg) => call(name, "configure", async () => stub(name).init(msg)),
    beginSeed: (name, epoch) => call(name, "beginSeed", async () => stub(name).beginSeed(epoch)),
    readSeedChunk: (name, epoch, id, index) => call(name, "readSeedChunk", async () => stub(name).readSeedChunk(epoch, id, index)),
    acceptSeedChunk: (name, id, index, body) => call(name, "acceptSeedChunk", async () => stub(name).acceptSeedChunk(id, index, body)),
    readOutputPage: (name, epoch, after, limit) => call(name, "readOutputPage", async () => stub(name).readOutputPage(epoch, after, limit)),
    acceptOutputs: (name, outputs) => call(name, "acceptOutputs", async () => stub(name).acceptOutputs(outputs)),
    finishSeed: (name, msg) => call(name, "finishSeed", async () => stub(name).finishSeed(msg)),
    readLog: (name, epoch, from, to) => call(name, "readLog", async () => stub(name).readLog(epoch, from, to)),
    replicate: (name, msg) => call(name, "replicate", async () => stub(name).replicate(msg)),
    ackStandby: (name, msg) => call(name, "ackStandby", async () => stub(name).ackStandby(msg)),
    applyBatch: (name, msg) => call(name, "applyBatch", async () => stub(name).applyBatch(msg)),
  };
}
