/**
 * Calls to replica Durable Objects with deadlines (counted, see object-calls.ts), as the ports the shared protocol
 * code expects: `ReplicaPort` for routers, `MonitorPort` for the monitor, `ForwardPort`
 * for a primary forwarding to its standby. A call that
 * misses its deadline rejects, exactly like one that failed. The two hot paths (a
 * router's writes, a primary's forwards) share one timer per port (`deadline-timer.ts`)
 * and reuse a stub per replica until a call through it fails.
 */
import type { MonitorPort } from "../shared/monitor/monitor-port.ts";
import type { ForwardPort } from "../shared/replica/forwarder.ts";
import type { ReplicaPort } from "../shared/router/write-partition.ts";
import { DeadlineTimer } from "./deadline-timer.ts";
import { monitorStub, replicaStub, withDeadline } from "./object-calls.ts";
import { lookupDataflow } from "./control-plane.ts";
import { dataflowOfReplica } from "../shared/names.ts";
import { keyGroupMapOf } from "../shared/keygroups/key-groups.ts";
import type { DeliveryPort, ReaderRoute } from "../shared/stages/deliverer.ts";
import type { DataflowRecord } from "../shared/wire/routing.ts";
import { seedPacer } from "./seed-pacing.ts";

type HintOf = (name: string) => string | null | undefined;
type Stub = ReturnType<typeof replicaStub>;

function stubFor(env: Env, hintOf: HintOf) {
  return (name: string) => replicaStub(env, name, hintOf(name));
}

/**
 * Runs `call` on a stub kept per replica name, bounded by `timer`; a failed call drops
 * the stub (the runtime may have broken it), so the next call makes a fresh one.
 */
function reusingStubs(env: Env, timer: DeadlineTimer, timeoutMs: number) {
  const stubs = new Map<string, Stub>();
  return <T>(name: string, what: string, call: (stub: Stub) => Promise<T>): Promise<T> => {
    let stub = stubs.get(name);
    if (!stub) stubs.set(name, (stub = replicaStub(env, name)));
    return timer.race(call(stub), timeoutMs, what).catch((err: unknown) => {
      if (stubs.get(name) === stub) stubs.delete(name);
      throw err;
    });
  };
}

/** Replica RPCs for routers, each bounded by `timeoutMs` on `timer` (one per request: a Worker's timers belong to a request). */
export function replicaPort(env: Env, timeoutMs: number, timer: DeadlineTimer): ReplicaPort {
  const call = reusingStubs(env, timer, timeoutMs);
  return {
    write: (name, msg) => call(name, `replica ${name} (write)`, async (stub) => stub.write(msg)),
  };
}

/** Runs a step of the object as its calls run: through an injected fault, if any (the object's gate). */
type Gate = <T>(run: () => T) => Promise<T>;

/**
 * A primary's forwards to its standby, each bounded by `timeoutMs` (one timer for the
 * object's forwards); its own later steps (a spread close's) go through `gate`, so an
 * injected crash or hang stops them as it stops the object's calls.
 */
export function forwardPort(env: Env, timeoutMs: number, gate: Gate = async (run) => run()): ForwardPort {
  const call = reusingStubs(env, new DeadlineTimer(), timeoutMs);
  return {
    replicate: (name, msg) => call(name, `standby ${name} (replicate)`, async (stub) => stub.replicate(msg)),
    // A timer, not a microtask: calls that arrived meanwhile (probes, writes) run first.
    later: <T>(step: () => T) =>
      new Promise<void>((resolve) => setTimeout(resolve, 0)).then(() => gate(step)).catch((err: unknown) => {
        console.error("replica: a spread close's step failed", err);
        throw err instanceof Error ? err : new Error(String(err));
      }),
  };
}

/**
 * Replica RPCs for the monitor: probes bounded by `probeTimeoutMs`, the rest by
 * `callTimeoutMs`; copy steps of a recovery paced by `seedPacing` (`FLUX_SEED_PACING`).
 */
export function monitorPort(env: Env, probeTimeoutMs: number, callTimeoutMs: number, seedPacing: number, hintOf: HintOf): MonitorPort {
  const stub = stubFor(env, hintOf);
  // One timer for the port's calls (a tick's probes go together), cleared once none waits.
  const timer = new DeadlineTimer(undefined, { clearWhenIdle: true });
  const call = <T>(name: string, method: string, run: () => Promise<T>): Promise<T> => withDeadline(run, callTimeoutMs, `replica ${name} (${method})`, timer);
  return {
    probe: (name) => withDeadline(async () => stub(name).status(), probeTimeoutMs, `replica ${name} (probe)`, timer),
    configure: (name, msg) => call(name, "configure", async () => stub(name).init(msg)),
    beginSeed: (name, epoch) => call(name, "beginSeed", async () => stub(name).beginSeed(epoch)),
    readSeedChunk: (name, epoch, id, index) => call(name, "readSeedChunk", async () => stub(name).readSeedChunk(epoch, id, index)),
    acceptSeedChunk: (name, id, index, body, spec) => call(name, "acceptSeedChunk", async () => stub(name).acceptSeedChunk(id, index, body, spec)),
    seedProgress: (name, id, chunks) => call(name, "seedProgress", async () => stub(name).seedProgress(id, chunks)),
    readOutputPage: (name, epoch, after, limit) => call(name, "readOutputPage", async () => stub(name).readOutputPage(epoch, after, limit)),
    acceptOutputs: (name, outputs) => call(name, "acceptOutputs", async () => stub(name).acceptOutputs(outputs)),
    finishSeed: (name, msg) => call(name, "finishSeed", async () => stub(name).finishSeed(msg)),
    readLog: (name, epoch, from, to) => call(name, "readLog", async () => stub(name).readLog(epoch, from, to)),
    replicate: (name, msg) => call(name, "replicate", async () => stub(name).replicate(msg)),
    // Copy steps of a recovery leave the thread to ingest between them while it takes writes.
    paceSeed: seedPacer(seedPacing),
    flush: (name, epoch) => call(name, "flush", async () => stub(name).flush(epoch)),
    write: (name, msg) => call(name, "write", async () => stub(name).write(msg)),
    moveStep: (name, msg) => call(name, "moveStep", async () => stub(name).moveStep(msg)),
  };
}

/**
 * An upstream primary's deliveries to the stages reading it (issue 27): each bounded by
 * `timeoutMs`, readers' routing from their monitors (issue 29), failed calls reported to the reader's monitor,
 * and wake-ups on the object's alarm (`wakeAt`, which survives a restart).
 */
export function deliveryPort(env: Env, timeoutMs: number, wakeAt: (atMs: number) => void): DeliveryPort {
  const call = reusingStubs(env, new DeadlineTimer(), timeoutMs);
  return {
    readers: async (ids) => {
      const records = await Promise.all(ids.map((id) => lookupDataflow(env, id, timeoutMs)));
      return records
        .filter((r): r is DataflowRecord => r !== null && r.ready && !r.deleting)
        .map((r): ReaderRoute => ({ id: r.id, spec: r.spec, keyGroups: keyGroupMapOf(r), routes: r.routes.map((route) => ({ primary: route.primary, epoch: route.epoch })) }));
    },
    deliver: (name, msg) => call(name, `stage replica ${name} (deliver)`, async (stub) => stub.deliver(msg)),
    reportFailure: (name) => void monitorStub(env, dataflowOfReplica(name)).reportFailure(name).catch(() => undefined),
    wakeAt,
    warn: (message) => console.warn(`exchange: ${message}`),
  };
}
