/**
 * One seeded run of the whole protocol in simulation (issue 4): producers post through
 * routers, replicas fail and return, the monitor takes over and recovers, readers follow
 * each partition's output cursor; then the run settles and the invariants are checked.
 * Everything random comes from one seeded RNG; time is simulated.
 */
import { routeEvents } from "../../shared/ingest/route-events.ts";
import { runMonitorTick } from "../../shared/monitor/run-monitor-tick.ts";
import type { MonitorPort } from "../../shared/monitor/monitor-port.ts";
import { partitionFor } from "../../shared/partitioner.ts";
import { planDataflow } from "../../shared/plan-dataflow.ts";
import type { ReplicaPort } from "../../shared/router/write-partition.ts";
import { writeBatch } from "../../shared/router/write-batch.ts";
import { DataflowSpecSchema } from "../../shared/wire/dataflow-spec.ts";
import { DataflowRecordSchema, HealthMapSchema, type DataflowRecord } from "../../shared/wire/routing.ts";
import { desiredConfigs } from "../../shared/monitor/desired-config.ts";
import { rng as makeRng } from "../helpers/rng.ts";
import { checkSettled, checkWriters, CursorReader } from "./sim-checks.ts";
import { SimClock } from "./sim-clock.ts";
import { SimReplicas } from "./sim-replicas.ts";
import type { Variant } from "./variants.ts";

export interface SimOptions {
  variant?: Variant | null;
  /** Take both replicas of a partition down at once (checks `unavailable`). */
  bothDown?: boolean;
  trace?: boolean;
}

export interface SimResult {
  seed: number;
  violations: string[];
  trace: string[];
  stats: { batches: number; faults: number; simMs: number };
}

const HEARTBEAT_MS = 50;
const ROUTER_DEADLINE_MS = 60;
const SETTLE_LIMIT_MS = 30_000;

type Batch = { producer: string; seq: number; events: { k: string; ts: number; v: number }[] };

export async function runSimulation(seed: number, options: SimOptions = {}): Promise<SimResult> {
  const rng = makeRng(seed);
  const clock = new SimClock();
  const trace: string[] = [];
  const log = options.trace ? (line: string) => trace.push(`[${String(clock.now).padStart(6)}] ${line}`) : () => {};
  const violations: string[] = [];
  const variant = options.variant ?? null;
  const replicas = new SimReplicas(
    clock,
    rng,
    { maxLatencyMs: 8, slowMs: 200, duplicateChance: 0.05, tuning: { dedupWindow: 256, checkpointEvery: 1 + rng.int(4) }, variant },
    log,
  );

  const spec = DataflowSpecSchema.parse({
    stream: "s",
    key: "k",
    timeField: "ts",
    window: { kind: "tumbling", sizeMs: 100 },
    aggregates: { n: { op: "count" }, v: { op: "sum", field: "v" } },
    partitions: 1 + rng.int(3),
  });
  // The coordinator's durable state: what the monitor saved last, and whether it is up.
  let stored = JSON.stringify({ ...planDataflow("df", spec, 0), ready: true });
  let storedHealth = "{}";
  let coordinatorUp = true;
  const load = (): DataflowRecord => {
    if (!coordinatorUp) throw new Error("coordinator down");
    return DataflowRecordSchema.parse(JSON.parse(stored));
  };
  const initial = load();
  for (const route of initial.routes) for (const init of desiredConfigs(initial, route)) replicas.host(init.name).init({ ...init, create: true });

  // Monitor: ticks every heartbeat; sometimes dies part-way through a tick, or is down for a while.
  let lastSaved = new Map(initial.routes.map((r) => [r.partition, { epoch: r.epoch, primary: r.primary }]));
  const monitorLoop = async (stopAt: () => boolean) => {
    while (!stopAt()) {
      await clock.sleep(HEARTBEAT_MS);
      if (!coordinatorUp) continue;
      const dies = rng.chance(0.05);
      let callsLeft = dies ? rng.int(12) : Number.POSITIVE_INFINITY;
      const alive = () => callsLeft-- > 0;
      const inner = replicas.port(40, 20);
      const port = new Proxy(inner, {
        get: (target, key: keyof MonitorPort) => (...args: never[]) =>
          alive() ? (target[key] as (...a: never[]) => Promise<unknown>)(...args) : Promise.reject(new Error("monitor died")),
      }) as MonitorPort;
      const record = load();
      const health = HealthMapSchema.parse(JSON.parse(storedHealth));
      const save = async (r: DataflowRecord, h: typeof health) => {
        if (!alive()) throw new Error("monitor died");
        for (const e of r.events.slice(JSON.parse(stored).events.length)) log(`monitor: ${e.kind} p${e.partition}: ${e.detail}`);
        if (variant === "promotion-without-fencing") unfence(r, lastSaved);
        stored = JSON.stringify(r);
        storedHealth = JSON.stringify(h);
        lastSaved = new Map(r.routes.map((x) => [x.partition, { epoch: x.epoch, primary: x.primary }]));
      };
      try {
        await runMonitorTick(port, { save }, [{ record, health }], clock.now, { failAfterMisses: 2, locationHints: [], missSpacingMs: 25 });
      } catch (err) {
        log(`monitor tick died: ${String(err)}`);
      }
      if (dies) log("monitor died mid-tick");
    }
  };

  // Routers: each caches routing for a while and refreshes on errors; sometimes dies mid-request.
  const routingTtlMs = 50 + rng.int(1500);
  const routers = Array.from({ length: 2 + rng.int(5) }, () => ({ cache: initial, fetchedAt: 0 }));
  const send = async (batch: Batch): Promise<void> => {
    const router = routers[rng.int(routers.length)] ?? { cache: initial, fetchedAt: 0 };
    if (clock.now - router.fetchedAt > routingTtlMs) {
      try {
        router.cache = load();
        router.fetchedAt = clock.now;
      } catch {
        // coordinator down: keep the cached routing (DESIGN.md §5)
      }
    }
    const base = replicas.port(ROUTER_DEADLINE_MS);
    const dies = rng.chance(0.08);
    let primaryCalls = 0;
    const port: ReplicaPort = {
      ...base,
      applyBatch: async (name, msg) => {
        const reply = await base.applyBatch(name, msg);
        if (dies && ++primaryCalls >= 1) throw new Error("router died after the primary answered");
        return reply;
      },
    };
    const subBatches = routeEvents(spec, batch.events, 0, 256);
    try {
      const acks = await writeBatch(port, [{ record: router.cache, subBatches }], batch, async () => [load()]);
      checkReplicatedAck(acks[0]?.partitions ?? [], batch);
    } catch (err) {
      router.fetchedAt = -Infinity;
      throw err;
    }
  };

  // A replicated acknowledgement means both replicas of a healthy partition hold the batch.
  const checkReplicatedAck = (acks: readonly { partition: number; replicated: boolean }[], batch: Batch) => {
    const record = DataflowRecordSchema.parse(JSON.parse(stored));
    for (const { partition, replicated } of acks) {
      const route = record.routes[partition];
      if (!replicated || !route || route.status !== "healthy" || !route.standby) continue;
      for (const name of [route.primary, route.standby]) {
        if (replicas.wiped.has(name) || replicas.holds(name, batch.producer, batch.seq)) continue;
        violations.push(`${batch.producer}#${batch.seq} acknowledged as replicated, but ${name} (partition ${partition}, epoch ${route.epoch}) does not hold it`);
      }
    }
  };

  // Producers: batches numbered 1..n, two in flight, resent until acknowledged, sometimes resent after.
  const producers = Array.from({ length: 1 + rng.int(3) }, (_, i) => `p${i}`);
  const acked = new Map<string, Batch>();
  const allBatches = new Map<string, Batch>();
  let outstanding = 0;
  const produce = async (producer: string, lane: number, count: number) => {
    for (let seq = 1 + lane; seq <= count; seq += 2) {
      await clock.sleep(rng.int(60));
      const events = Array.from({ length: 1 + rng.int(4) }, () => ({ k: `key${rng.int(12)}`, ts: clock.now + rng.int(150), v: rng.int(100) }));
      const batch = { producer, seq, events };
      allBatches.set(`${producer}#${seq}`, batch);
      outstanding += 1;
      const startedAt = clock.now;
      for (;;) {
        try {
          await send(batch);
          break;
        } catch (err) {
          log(`${producer}#${seq} not acknowledged: ${err instanceof Error ? err.message : String(err)}`);
          if (clock.now - startedAt > SETTLE_LIMIT_MS) {
            violations.push(`batch ${producer}#${seq} not acknowledged within ${SETTLE_LIMIT_MS} ms`);
            outstanding -= 1;
            return;
          }
          await clock.sleep(10 + rng.int(40));
        }
      }
      outstanding -= 1;
      acked.set(`${producer}#${seq}`, batch);
      log(`${producer}#${seq} acknowledged`);
      if (rng.chance(0.1)) await send(batch).catch(() => undefined);
    }
  };

  // An output a reader receives comes from the stable prefix, so the standby already holds it.
  const checkOutputsReplicated = (partition: number, outputs: readonly { outputSeq: number; result: unknown }[]) => {
    const route = DataflowRecordSchema.parse(JSON.parse(stored)).routes[partition];
    if (!route || route.status !== "healthy" || !route.standby || replicas.wiped.has(route.standby)) return;
    const held = new Map(replicas.replica(route.standby).storage.outputs.map((o) => [o.outputSeq, JSON.stringify(o.result)]));
    for (const o of outputs) {
      if (held.get(o.outputSeq) !== JSON.stringify(o.result)) {
        violations.push(`partition ${partition}: a reader got output ${o.outputSeq} that standby ${route.standby} does not hold (unstable prefix)`);
      }
    }
  };

  // Readers: follow each partition's output stream from whatever the routing calls primary.
  const readers = initial.routes.map((r) => new CursorReader(r.partition, violations));
  const readLoop = async (stopAt: () => boolean) => {
    const port = replicas.port(ROUTER_DEADLINE_MS);
    while (!stopAt()) {
      await clock.sleep(30);
      let record: DataflowRecord;
      try {
        record = load();
      } catch {
        continue;
      }
      await Promise.all(
        record.routes.map(async (route) => {
          const reader = readers[route.partition];
          if (!reader) return;
          try {
            const page = await port.readOutputPage(route.primary, route.epoch, reader.cursor, 50);
            if (page.status !== "ok") return;
            reader.accept(page.outputs, route.primary);
            checkOutputsReplicated(route.partition, page.outputs);
          } catch {
            // unavailable right now; the cursor waits
          }
        }),
      );
    }
  };

  // Faults: at most one replica per partition down at a time (or both, in both-down runs).
  let faults = 0;
  const faultLoop = async (stopAt: () => boolean) => {
    while (!stopAt()) {
      await clock.sleep(100 + rng.int(400));
      if (stopAt()) return;
      if (rng.chance(0.15)) {
        coordinatorUp = false;
        log("coordinator down");
        await clock.sleep(100 + rng.int(300));
        coordinatorUp = true;
        log("coordinator up");
        continue;
      }
      const record = DataflowRecordSchema.parse(JSON.parse(stored));
      const route = record.routes[rng.int(record.routes.length)];
      // One failure per partition at a time: both replicas up and holding their state.
      const intact = (name: string) => replicas.replica(name).fault === null && replicas.host(name).status() !== null;
      if (!route || route.status !== "healthy" || !route.standby || !intact(route.primary) || !intact(route.standby)) continue;
      if (options.bothDown && faults >= 2) continue;
      faults += 1;
      if (options.bothDown) {
        const pair = [route.primary, route.standby];
        for (const name of pair) replicas.inject(name, "crash");
        await clock.sleep(400 + rng.int(400));
        const status = DataflowRecordSchema.parse(JSON.parse(stored)).routes[route.partition]?.status;
        if (status !== "unavailable") violations.push(`partition ${route.partition} reported ${status} with both replicas down`);
        // Either both return, or only the one the routing last made primary: the other may
        // lack writes acknowledged while it was down, so it cannot bring the partition back.
        const lastPrimary = DataflowRecordSchema.parse(JSON.parse(stored)).routes[route.partition]?.primary ?? route.primary;
        for (const name of rng.chance(0.5) ? pair : [lastPrimary]) replicas.inject(name, "heal");
        continue;
      }
      const victim = [route.primary, route.standby][rng.int(2)] ?? "";
      const kind = (["crash", "hang", "slow", "wipe"] as const)[rng.int(4)] ?? "crash";
      replicas.inject(victim, kind);
      if (kind === "wipe") continue;
      if (rng.chance(0.5)) {
        // A zombie: it comes back the moment it has been replaced, while routers may still point at it.
        const replacedBy = clock.now + 5_000;
        while (clock.now < replacedBy) {
          await clock.sleep(10);
          const now = DataflowRecordSchema.parse(JSON.parse(stored)).routes[route.partition];
          if (now && now.primary !== victim && now.standby !== victim) break;
        }
      } else {
        await clock.sleep(50 + rng.int(800));
      }
      replicas.inject(victim, "heal");
    }
  };

  const counts = producers.map(() => 4 + rng.int(8));
  const total = counts.reduce((a, b) => a + b, 0);
  let clientsDone = false;
  let settled = false;
  const clients = Promise.all(producers.flatMap((p, i) => [0, 1].map((lane) => produce(p, lane, counts[i] ?? 0)))).then(() => {
    clientsDone = true;
  });
  let faultsDone = false;
  const loops = [
    ["monitor", monitorLoop(() => settled)],
    ["reader", readLoop(() => settled)],
    ["faults", faultLoop(() => clientsDone).finally(() => (faultsDone = true))],
  ] as const;
  for (const [name, loop] of loops) {
    loop.catch((err: unknown) => violations.push(`simulator ${name} loop crashed: ${err instanceof Error ? err.stack : String(err)}`));
  }
  await clock.run(SETTLE_LIMIT_MS * 2, () => clientsDone && faultsDone);
  await clients;

  // Faults have stopped: heal every replica (a wiped one stays empty) and let the system settle.
  for (const [name, r] of replicas.replicas) if (r.fault) replicas.inject(name, "heal");
  coordinatorUp = true;
  // Give the monitor a few heartbeats to notice the last fault before judging.
  await clock.run(clock.now + 4 * HEARTBEAT_MS);
  const healthyBy = clock.now + SETTLE_LIMIT_MS;
  const isSettled = () =>
    DataflowRecordSchema.parse(JSON.parse(stored)).routes.every((r) => {
      const primary = replicas.host(r.primary).status();
      const standby = r.standby ? replicas.host(r.standby).status() : null;
      return (
        r.status === "healthy" &&
        primary !== null &&
        standby !== null &&
        standby.lsn === primary.lsn &&
        primary.appliedLsn === primary.lsn &&
        (readers[r.partition]?.cursor ?? 0) >= primary.outputSeq
      );
    });
  await clock.run(healthyBy, isSettled);
  if (!isSettled()) violations.push(`partitions not healthy and caught up ${SETTLE_LIMIT_MS} ms after faults stopped`);
  settled = true;
  await clock.run(clock.now + 1_000);

  if (acked.size !== total && violations.length === 0) violations.push(`only ${acked.size} of ${total} batches acknowledged`);
  // Batches never acknowledged may have been applied, but at most once.
  const unacked = [...allBatches.values()].filter((b) => !acked.has(`${b.producer}#${b.seq}`));
  checkWriters(replicas.writers, violations);
  const record = DataflowRecordSchema.parse(JSON.parse(stored));
  for (const route of record.routes) {
    const recordsIn = (batches: Iterable<Batch>) =>
      [...batches].reduce((n, b) => n + b.events.filter((e) => partitionFor(e.k, spec.partitions) === route.partition).length, 0);
    const expected = { min: recordsIn(acked.values()), max: recordsIn(acked.values()) + recordsIn(unacked) };
    const primary = replicas.host(route.primary);
    const standby = route.standby ? replicas.host(route.standby) : null;
    const results = primary.readResults(route.epoch, {});
    const counted = results.status === "ok" ? results.results.reduce((n, r) => n + (r.values.n ?? 0), 0) : -1;
    const outputs = (name: string | null) => (name ? JSON.stringify(replicas.replica(name).storage.outputs) : "");
    checkSettled(
      { partition: route.partition, primary: primary.status(), standby: standby?.status() ?? null, counted, primaryOutputs: outputs(route.primary), standbyOutputs: outputs(route.standby) },
      expected,
      violations,
    );
  }
  return { seed, violations, trace, stats: { batches: total, faults, simMs: clock.now } };
}

/** The promotion-without-fencing variant: a takeover keeps the old epoch. */
function unfence(record: DataflowRecord, lastSaved: ReadonlyMap<number, { epoch: number; primary: string }>): void {
  for (const route of record.routes) {
    const before = lastSaved.get(route.partition);
    if (before && route.primary !== before.primary && route.epoch > before.epoch) route.epoch = before.epoch;
  }
}

