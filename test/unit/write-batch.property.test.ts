/**
 * Property (issues 2, 10, 12): random batches from several producers, posted concurrently
 * through a router's write coalescer (so concurrent ones share calls and forwards) by
 * routers with stale routing, with random resends, reordering, replica restarts, calls
 * that fail before they run, replies lost after they ran, and epoch changes, give exactly
 * the outputs and open windows of a single-node reference fed each distinct batch once in
 * the partition's log order — windows close (lateness 0..2 s), so output numbering on both
 * replicas is checked too.
 */
import { describe, expect, it } from "vitest";
import { FluxError } from "../../shared/errors.ts";
import { routeEvents } from "../../shared/ingest/route-events.ts";
import { desiredConfigs } from "../../shared/monitor/desired-config.ts";
import { windowAggregate } from "../../shared/operators/window-aggregate.ts";
import { readResults } from "../../shared/router/read-results.ts";
import { writeBatch } from "../../shared/router/write-batch.ts";
import { WriteCoalescer } from "../../shared/router/write-coalescer.ts";
import type { SendBatch } from "../../shared/router/write-partition.ts";
import type { DataflowSpec } from "../../shared/wire/dataflow-spec.ts";
import type { LogEntry } from "../../shared/wire/persisted.ts";
import type { DataflowRecord } from "../../shared/wire/routing.ts";
import { compareResults, type WindowResult } from "../../shared/wire/window-result.ts";
import { StableHistory } from "../sim/stable-history.ts";
import { formatViolation, Violations } from "../sim/violations.ts";
import { MemoryCluster } from "../helpers/memory-cluster.ts";
import { record, spec } from "../helpers/fixtures.ts";
import { rng } from "../helpers/rng.ts";
import { keyGroupMapOf, type KeyGroupMap } from "../../shared/keygroups/key-groups.ts";

/** `FLUX_PROPERTY_SEEDS=N` (and `FLUX_PROPERTY_FROM=S`) explores more schedules than CI's 200. */
const SEEDS = Number(process.env.FLUX_PROPERTY_SEEDS ?? 200);
const FROM = Number(process.env.FLUX_PROPERTY_FROM ?? 1);

type Batch = { producer: string; seq: number; events: { page: string; ts: number; bytes: number }[] };
/** What the faults did over all seeds: each must have happened, or the property proved less than it says. */
const felt = { failedCalls: 0, lostReplies: 0, epochChanges: 0, staleRetries: 0, closedWindows: 0, lateRecords: 0 };

class Injected extends Error {}

/** Moves every partition to a new epoch, as the monitor does when it re-attaches a standby. */
function bumpEpochs(current: DataflowRecord, cluster: MemoryCluster): DataflowRecord {
  const next = structuredClone(current);
  for (const route of next.routes) {
    route.epoch += 1;
    route.version += 1;
    for (const desired of desiredConfigs(next, route)) expect(cluster.host(desired.name).init(desired).status).toBe("ok");
  }
  felt.epochChanges += 1;
  return next;
}

/** Posts until acknowledged; only retryable answers are retried. */
async function post(send: SendBatch, s: DataflowSpec, b: Batch, routing: () => DataflowRecord, current: () => DataflowRecord): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const refresh = async () => {
      felt.staleRetries += 1;
      return [current()];
    };
    try {
      await writeBatch(send, [{ record: routing(), subBatches: routeEvents(s, b.events, 0, 256, keyGroupMapOf(routing())) }], b, refresh);
      return;
    } catch (err) {
      if (!(err instanceof FluxError) || !err.retryable) throw err;
    }
  }
  throw new Error(`${b.producer}#${b.seq} never acknowledged`);
}

async function runSeed(seed: number) {
  const r = rng(seed);
  // Interleavings (yields, faults, restarts) draw from their own stream, so a change to how
  // the workload is drawn does not silently re-map the schedules each seed explores.
  const sched = rng(seed * 2_654_435_761);
  const s = spec({ partitions: 1 + r.int(4), replication: r.chance(0.8) ? 2 : 1, window: { kind: "tumbling", sizeMs: 1000, allowedLatenessMs: r.int(2000) } });
  const cluster = new MemoryCluster({ dedupWindow: 256, checkpointEvery: 1 + r.int(5) });
  const initial = record("df", s);
  cluster.setUp(initial);
  const violations = new Violations();
  const history = new StableHistory(violations);
  for (const storage of cluster.storages.values()) history.watch(storage);
  let faults = true;
  cluster.beforeCall = async () => {
    for (let i = sched.int(4); i > 0; i--) await Promise.resolve();
    if (faults && sched.chance(0.05)) throw (felt.failedCalls++, new Injected("call failed before it ran"));
  };
  cluster.afterCall = () => {
    if (faults && sched.chance(0.05)) throw (felt.lostReplies++, new Injected("reply lost after the call ran"));
  };
  const producers = ["p1", "p2", "p3"].slice(0, 1 + r.int(3));
  const batches = producers.flatMap((producer) =>
    Array.from({ length: 3 + r.int(12) }, (_, i) => ({
      producer,
      seq: i + 1,
      events: Array.from({ length: 1 + r.int(6) }, () => ({ page: `k${r.int(7)}`, ts: r.int(5000), bytes: r.int(100) - 20 })),
    })),
  );
  const current = await postAll(r, sched, cluster, s, initial, batches);
  faults = false;
  expect(cluster.errors, `seed ${seed}: replica code threw`).toEqual([]);
  expect(violations.list.map(formatViolation), `seed ${seed}`).toEqual([]);
  await checkAgainstReference(`seed ${seed}`, cluster, s, current, history, batches);
}

/**
 * Sends every batch at least once, some again, in a random order, in waves of concurrent
 * posts: half through routing that is never refreshed; replicas restart during waves and
 * epochs move between them. Each post counts as a request in progress, as the events route
 * does, so sends on an idle lane may linger for others' batches. @returns the routing as it ends.
 */
async function postAll(r: ReturnType<typeof rng>, sched: ReturnType<typeof rng>, cluster: MemoryCluster, s: DataflowSpec, initial: DataflowRecord, batches: readonly Batch[]): Promise<DataflowRecord> {
  const replicaNames = initial.routes.flatMap((route) => [route.primary, ...(route.standby ? [route.standby] : [])]);
  const sends = r.shuffle([...batches, ...batches.filter(() => r.chance(0.4))]);
  const coalescer = new WriteCoalescer({ maxBatches: 1 + r.int(6), maxChars: 50 + r.int(400), pollMs: 1, giveUpMs: 10_000, staleMs: 5_000, lingerPolls: r.int(3) });
  // Each poll waits a macrotask (a fake timer that fires at once), as the real one would.
  const after = (_ms: number, fire: () => void) => void setTimeout(fire, 0);
  let current = initial;
  while (sends.length > 0) {
    const wave = sends.splice(0, 1 + r.int(4));
    const posted = Promise.all(
      wave.map(async (b) => {
        const request = coalescer.enter();
        try {
          await post(coalescer.sendVia(cluster, after, request), s, b, () => (r.chance(0.5) ? initial : current), () => current);
        } finally {
          request.leave();
        }
      }),
    );
    // A replica restarts while writes and forwards are in flight (its memory is lost, storage kept).
    if (sched.chance(0.3)) {
      for (let i = sched.int(6); i > 0; i--) await Promise.resolve();
      cluster.restart(replicaNames[sched.int(replicaNames.length)] ?? "");
    }
    await posted;
    if (r.chance(0.15)) current = bumpEpochs(current, cluster);
  }
  return current;
}

/** Per partition: outputs on both replicas, late records and served results equal the reference fed the stable log. */
async function checkAgainstReference(where: string, cluster: MemoryCluster, s: DataflowSpec, current: DataflowRecord, history: StableHistory, batches: readonly Batch[]): Promise<void> {
  const expectedAll: WindowResult[] = [];
  for (const route of current.routes) {
    // A primary restarted last may hold entries that were stable before as pending again until it forwards them (the monitor's flush).
    if (route.standby) await cluster.host(route.primary).flush(route.epoch);
    const status = cluster.host(route.primary).status();
    expect(status?.appliedLsn, `${where}: primary stable prefix`).toBe(status?.lsn);
    const { entries, missing } = history.log(`${current.id}/${route.partition}`, status?.appliedLsn ?? 0);
    expect(missing, `${where}: partition ${route.partition} stable log`).toBeNull();
    const reference = referenceRun(s, keyGroupMapOf(current), route.partition, entries, batches);
    const outputs = (name: string) => cluster.storages.get(name)?.outputs ?? [];
    expect(outputs(route.primary), `${where}: outputs of partition ${route.partition}`).toEqual(reference.closed.map((result, i) => ({ outputSeq: i + 1, result })));
    if (route.standby) {
      expect(cluster.host(route.standby).status()?.lsn, `${where}: standby of partition ${route.partition} holds every LSN`).toBe(status?.lsn);
      expect(outputs(route.standby), `${where}: standby outputs of partition ${route.partition}`).toEqual(outputs(route.primary));
    }
    expect(status?.lateRecords, `${where}: late records`).toBe(reference.late);
    expectedAll.push(...reference.closed, ...reference.open);
  }
  const expected = expectedAll.sort(compareResults);
  const read = (filter: { limit?: number; after?: { windowStartMs: number; key: string } }) =>
    readResults(async (name, epoch, f) => cluster.host(name).readResults(epoch, f), current, filter);
  expect((await read({})).results, where).toEqual(expected);
  // Paging through the same results, two at a time, gives the same list.
  const paged: WindowResult[] = [];
  let after: { windowStartMs: number; key: string } | undefined;
  for (let page = 0; page < 1000; page++) {
    const { results, next } = await read({ limit: 2, after });
    paged.push(...results);
    if (!next) break;
    after = next;
  }
  expect(paged, `${where}: paged`).toEqual(expected);
}

/** A single-node reference fed each batch logged in the partition, in log order, once. */
function referenceRun(s: DataflowSpec, groups: KeyGroupMap, partition: number, log: readonly LogEntry[], batches: readonly Batch[]) {
  const op = windowAggregate(s);
  let state = op.init();
  const closed: WindowResult[] = [];
  const seen = new Set<string>();
  for (const entry of log) {
    const id = `${entry.producer}#${entry.seq}`;
    expect(seen.has(id), `${id} logged twice`).toBe(false);
    seen.add(id);
    const batch = batches.find((b) => `${b.producer}#${b.seq}` === id);
    state = op.process(state, routeEvents(s, batch?.events ?? [], 0, 256, groups).get(partition) ?? [], (result) => void closed.push(result));
  }
  const mine = batches.filter((b) => routeEvents(s, b.events, 0, 256, groups).has(partition)).map((b) => `${b.producer}#${b.seq}`);
  expect([...seen].sort(), `partition ${partition} logged every batch once`).toEqual(mine.sort());
  felt.closedWindows += closed.length;
  const late = op.lateRecords?.(state) ?? 0;
  felt.lateRecords += late;
  return { closed, open: op.openResults(state, {}), late };
}

describe("writeBatch property", () => {
  it(`matches a single-node reference over ${SEEDS} seeds of stale routing, failed calls, lost replies, epoch changes and restarts`, { timeout: 120_000 }, async () => {
    for (let seed = FROM; seed < FROM + SEEDS; seed++) await runSeed(seed);
    console.log(`writeBatch property over ${SEEDS} seeds: ${JSON.stringify(felt)}`);
    for (const [what, n] of Object.entries(felt)) expect(n, `${what} never happened`).toBeGreaterThan(0);
  });
});
