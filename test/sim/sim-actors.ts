/**
 * The actors of a simulated run: routers, producers and cursor readers, each an async loop
 * over simulated time acting on a `SimWorld` (the monitors' loops are in `sim-monitor-loop.ts`,
 * the fault injector in `sim-faults.ts`).
 */
import { routeEvents } from "../../shared/ingest/route-events.ts";
import { writeBatch } from "../../shared/router/write-batch.ts";
import type { SendBatch } from "../../shared/router/write-partition.ts";
import type { DataflowRecord } from "../../shared/wire/routing.ts";
import { FluxError } from "../../shared/errors.ts";
import { checkResultsOnce } from "./sim-checks.ts";
import { ROUTER_DEADLINE_MS, type Batch, type SimWorld } from "./sim-world.ts";
import type { SimDataflow } from "./sim-dataflows.ts";
import { InjectedFailure, isFailedCall } from "./violations.ts";
import { keyGroupMapOf } from "../../shared/keygroups/key-groups.ts";

/** The keys producers write (the mover's moves carry mostly their key groups). */
export const SIM_KEYS = Array.from({ length: 12 }, (_, i) => `key${i}`);

/** Extra batches a producer lane may write while faults are still being injected. */
const EXTRA_BATCHES = 12;

/** One post through a random router, which may hold stale routing and may die after the primary answered. */
async function send(w: SimWorld, batch: Batch): Promise<void> {
  const router = w.routers[w.rng.int(w.routers.length)];
  if (!router) throw new Error("a simulated world has routers");
  if (w.clock.now - router.fetchedAt > w.routingTtlMs) {
    try {
      router.cache = w.load();
      router.fetchedAt = w.clock.now;
    } catch {
      // its monitor down: keep the cached routing (DESIGN.md §5)
    }
  }
  const dies = w.rng.chance(0.08);
  // In progress from here (read for 0-1 ms first): other requests' writes may linger for its sub-batches.
  const request = router.coalescer.enter();
  await w.clock.sleep(w.rng.int(2));
  const coalesced = router.coalescer.sendVia(w.replicas.port(ROUTER_DEADLINE_MS), (ms, fire) => void w.clock.sleep(ms).then(fire), request);
  const send: SendBatch = async (primary, epoch, b) => {
    const reply = await coalesced(primary, epoch, b);
    if (dies) throw new InjectedFailure("router died after the primary answered");
    return reply;
  };
  try {
    const routed = routeEvents(w.spec, batch.events, 0, 256, keyGroupMapOf(router.cache));
    const subBatches = w.hooks.route ? w.hooks.route(routed) : routed;
    const acks = await writeBatch(send, [{ record: router.cache, subBatches }], batch, async () => [w.load()]);
    checkReplicatedAck(w, acks[0]?.partitions ?? [], batch);
  } catch (err) {
    router.fetchedAt = -Infinity;
    // As the Worker does: a 503 of a failed or refused call is reported to the dataflow's monitor (issue 29).
    if (err instanceof FluxError && err.code === "UNAVAILABLE") w.report(w.first, err.replica ?? null);
    throw err;
  } finally {
    request.leave();
  }
}

/** A replicated acknowledgement means both replicas of a healthy partition hold the batch. */
function checkReplicatedAck(w: SimWorld, acks: readonly { partition: number; replicated: boolean }[], batch: Batch): void {
  const record = w.record();
  for (const { partition, replicated } of acks) {
    const route = record.routes[partition];
    if (!replicated || !route || route.status !== "healthy" || !route.standby) continue;
    for (const name of [route.primary, route.standby]) {
      if (w.replicas.wiped.has(name) || w.replicas.holds(name, batch.producer, batch.seq)) continue;
      w.violations.add("replicated-ack", `${batch.producer}#${batch.seq} acknowledged as replicated, but ${name} (partition ${partition}, epoch ${route.epoch}) does not hold it`);
    }
  }
}

/**
 * A producer lane: batches `1 + lane`, `3 + lane`, … resent until acknowledged, sometimes
 * resent after; at least `count` of them, and more while faults are still being injected.
 */
export async function produce(w: SimWorld, producer: string, lane: number, count: number): Promise<void> {
  for (let seq = 1 + lane; seq <= count || (!w.faultsDone && seq <= count + EXTRA_BATCHES); seq += 2) {
    // Extra batches come slower: they keep writes going while the remaining faults strike.
    await w.clock.sleep(seq <= count ? w.rng.int(60) : 30 + w.rng.int(120));
    const events = Array.from({ length: 1 + w.rng.int(4) }, () => ({ k: SIM_KEYS[w.rng.int(SIM_KEYS.length)] ?? "key0", ts: w.clock.now + w.rng.int(150), v: w.rng.int(100) }));
    const batch = { producer, seq, events };
    w.allBatches.set(`${producer}#${seq}`, batch);
    if (!(await sendUntilAcked(w, batch))) return;
    w.acked.set(`${producer}#${seq}`, batch);
    w.log(`${producer}#${seq} acknowledged`);
    if (w.rng.chance(0.1)) {
      await send(w, batch).catch((err: unknown) => {
        if (!expectedRefusal(err)) w.violations.exception(`router resending ${producer}#${seq}`, err);
      });
    }
  }
}

/** Resends until acknowledged; false (with a violation) after the settle limit or an answer a client must not retry. */
async function sendUntilAcked(w: SimWorld, batch: Batch): Promise<boolean> {
  const id = `${batch.producer}#${batch.seq}`;
  const startedAt = w.clock.now;
  for (;;) {
    try {
      await send(w, batch);
      return true;
    } catch (err) {
      w.log(`${id} not acknowledged: ${err instanceof Error ? err.message : String(err)}`);
      if (err instanceof FluxError && err.code === "BACKPRESSURE") w.coverage.backpressure += 1;
      if (!expectedRefusal(err)) {
        w.violations.exception(`router writing ${id}`, err);
        return false;
      }
      if (w.clock.now - startedAt > w.settleLimitMs) {
        w.violations.add("settles", `batch ${id} not acknowledged within ${w.settleLimitMs} ms`);
        return false;
      }
      await w.clock.sleep(10 + w.rng.int(40));
    }
  }
}

/** A failed call, or the router's retryable 503 (a fail-over, or a stage too far behind): what a client resends after. */
function expectedRefusal(err: unknown): boolean {
  return isFailedCall(err) || (err instanceof FluxError && (err.code === "UNAVAILABLE" || err.code === "BACKPRESSURE"));
}

/** Readers follow each partition's output stream of every dataflow from whatever the routing calls primary. */
export async function readLoop(w: SimWorld, stopAt: () => boolean): Promise<void> {
  const port = w.replicas.port(ROUTER_DEADLINE_MS);
  while (!stopAt()) {
    await w.clock.sleep(30);
    await Promise.all(w.dataflows.map((dataflow) => readDataflow(w, port, dataflow)));
  }
}

async function readDataflow(w: SimWorld, port: ReturnType<SimWorld["replicas"]["port"]>, dataflow: SimDataflow): Promise<void> {
  let record: DataflowRecord;
  try {
    record = w.load(dataflow);
  } catch {
    return;
  }
  await Promise.all(
    record.routes.map(async (route) => {
      const reader = dataflow.readers[route.partition];
      if (!reader) return;
      const where = `${dataflow.id} partition ${route.partition}`;
      try {
        const page = await port.readOutputPage(route.primary, route.epoch, reader.cursor, 50);
        if (page.status !== "ok") return;
        reader.accept(page.outputs, route.primary);
        checkOutputsReplicated(w, dataflow, route.partition, page.outputs);
        const primary = w.replicas.live(route.primary);
        if (primary) checkResultsOnce(where, w.replicas.replica(route.primary).storage.outputs, primary.operator.openResults({}), w.violations);
      } catch (err) {
        // unavailable right now; the cursor waits, and its monitor hears of it (issue 29)
        if (!isFailedCall(err)) w.violations.exception(`reader of ${where}`, err);
        else w.report(dataflow, route.primary);
      }
    }),
  );
}

/** An output a reader receives comes from the stable prefix, so the standby already holds it. */
function checkOutputsReplicated(w: SimWorld, dataflow: SimDataflow, partition: number, outputs: readonly { outputSeq: number; result: unknown }[]): void {
  const route = dataflow.record().routes[partition];
  if (!route || route.status !== "healthy" || !route.standby || w.replicas.wiped.has(route.standby)) return;
  const held = new Map(w.replicas.replica(route.standby).storage.outputs.map((o) => [o.outputSeq, JSON.stringify(o.result)]));
  for (const o of outputs) {
    if (held.get(o.outputSeq) !== JSON.stringify(o.result)) {
      w.violations.add("stable-prefix", `${dataflow.id} partition ${partition}: a reader got output ${o.outputSeq} that standby ${route.standby} does not hold (unstable prefix)`);
    }
  }
}

