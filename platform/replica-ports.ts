/**
 * Calls to replica Durable Objects with deadlines (counted, see object-calls.ts), as the ports the shared protocol
 * code expects: `ReplicaPort` for routers, `MonitorPort` for the monitor, `ForwardPort`
 * for a primary forwarding to its standby. A call that
 * misses its deadline rejects, exactly like one that failed.
 */
import type { MonitorPort } from "../shared/monitor/monitor-port.ts";
import type { ForwardPort } from "../shared/replica/forwarder.ts";
import type { ReplicaPort } from "../shared/router/write-partition.ts";
import { replicaStub, withDeadline } from "./object-calls.ts";
import { seedPacer } from "./seed-pacing.ts";

type HintOf = (name: string) => string | null | undefined;

function stubFor(env: Env, hintOf: HintOf) {
  return (name: string) => replicaStub(env, name, hintOf(name));
}

/** Replica RPCs for routers, each bounded by `timeoutMs`. */
export function replicaPort(env: Env, timeoutMs: number): ReplicaPort {
  const stub = stubFor(env, () => null);
  const call = <T>(name: string, method: string, run: () => Promise<T>): Promise<T> => withDeadline(run, timeoutMs, `replica ${name} (${method})`);
  return {
    write: (name, msg) => call(name, "write", async () => stub(name).write(msg)),
  };
}

/** A primary's forwards to its standby, each bounded by `timeoutMs`. */
export function forwardPort(env: Env, timeoutMs: number): ForwardPort {
  const stub = stubFor(env, () => null);
  return { replicate: (name, msg) => withDeadline(async () => stub(name).replicate(msg), timeoutMs, `standby ${name} (replicate)`) };
}

/** Replica RPCs for the monitor: probes bounded by `probeTimeoutMs`, the rest by `callTimeoutMs`. */
export function monitorPort(env: Env, probeTimeoutMs: number, callTimeoutMs: number, hintOf: HintOf): MonitorPort {
  const stub = stubFor(env, hintOf);
  const call = <T>(name: string, method: string, run: () => Promise<T>): Promise<T> => withDeadline(run, callTimeoutMs, `replica ${name} (${method})`);
  // Calls that copy seed data to a fresh replica leave the thread to ingest between them.
  const paced = seedPacer();
  return {
    probe: (name) => withDeadline(async () => stub(name).status(), probeTimeoutMs, `replica ${name} (probe)`),
    configure: (name, msg) => call(name, "configure", async () => stub(name).init(msg)),
    beginSeed: (name, epoch) => call(name, "beginSeed", async () => stub(name).beginSeed(epoch)),
    readSeedChunk: (name, epoch, id, index) => call(name, "readSeedChunk", async () => stub(name).readSeedChunk(epoch, id, index)),
    acceptSeedChunk: (name, id, index, body, spec) => paced(() => call(name, "acceptSeedChunk", async () => stub(name).acceptSeedChunk(id, index, body, spec))),
    readOutputPage: (name, epoch, after, limit) => call(name, "readOutputPage", async () => stub(name).readOutputPage(epoch, after, limit)),
    acceptOutputs: (name, outputs) => paced(() => call(name, "acceptOutputs", async () => stub(name).acceptOutputs(outputs))),
    finishSeed: (name, msg) => call(name, "finishSeed", async () => stub(name).finishSeed(msg)),
    readLog: (name, epoch, from, to) => call(name, "readLog", async () => stub(name).readLog(epoch, from, to)),
    replicate: (name, msg) => paced(() => call(name, "replicate", async () => stub(name).replicate(msg))),
    flush: (name, epoch) => call(name, "flush", async () => stub(name).flush(epoch)),
    write: (name, msg) => call(name, "write", async () => stub(name).write(msg)),
  };
}
