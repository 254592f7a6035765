// The benchmark scenarios of issue 5, each returning plain numbers for the report (the
// throughput matrix of issue 12 is in matrix.mjs, the idle cost in idle.mjs).
import { routeEvents } from "../shared/ingest/route-events.ts";
import { keyGroupMapOf, newKeyGroupTable } from "../shared/keygroups/key-groups.ts";
import { windowAggregate } from "../shared/operators/window-aggregate.ts";
import { partitionFor } from "../shared/partitioner.ts";
import { DataflowSpecSchema } from "../shared/dataflow-checks/dataflow-spec-schema.ts";
import { api, injectFault, selfCpuSeconds, TOKEN, workerdCpuSeconds } from "./harness.mjs";
import { makeBatch, prng, runLoad } from "./load.mjs";
import { checkpointStall, longestProbe, stallProbe } from "./stalls.mjs";

const BATCH = 100;
const KEYS = 10_000;
const CONCURRENCY = 8;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export const specFor = (stream, partitions, replication) => ({
  stream,
  key: "page",
  timeField: "ts",
  window: { kind: "tumbling", sizeMs: 60_000, allowedLatenessMs: 86_400_000 },
  aggregates: { n: { op: "count" }, bytes: { op: "sum", field: "bytes" } },
  partitions,
  replication,
});

export async function createDataflow(url, id, spec) {
  const res = await api(url, "PUT", `/v1/dataflows/${id}`, spec);
  if (res.status !== 201 && res.status !== 200) throw new Error(`create ${id}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.dataflow;
}

/** Raw baseline: the same batches parsed, routed and aggregated in this Node process. */
export function rawBaseline(durationMs) {
  const spec = DataflowSpecSchema.parse(specFor("raw", 4, 1));
  const op = windowAggregate(spec);
  const states = new Map();
  // Keys on partitions as a new dataflow's key groups put them.
  const newKeyGroups = keyGroupMapOf({ keyGroups: newKeyGroupTable(spec.partitions), routes: Array.from({ length: spec.partitions }) });
  const random = prng(1);
  const bodies = Array.from({ length: 200 }, () => JSON.stringify(makeBatch(random, BATCH, KEYS, 1_000)));
  let events = 0;
  const cpu0 = selfCpuSeconds();
  const started = performance.now();
  for (let i = 0; performance.now() - started < durationMs; i++) {
    const parsed = JSON.parse(bodies[i % bodies.length]);
    for (const [partition, records] of routeEvents(spec, parsed, 0, 256, newKeyGroups)) {
      // As a replica receives it: one serialized sub-batch, parsed and aggregated.
      const received = JSON.parse(JSON.stringify(records));
      states.set(partition, op.process(states.get(partition) ?? op.init(), received, () => {}));
    }
    events += parsed.length;
  }
  const seconds = (performance.now() - started) / 1000;
  return { events, eventsPerSecond: events / seconds, cpuMicrosPerEvent: ((selfCpuSeconds() - cpu0) * 1e6) / events };
}

/**
 * A cost profile: workerd CPU per batch at several batch sizes, P=1, for R=1 and R=2.
 * A straight-line fit splits it into a fixed cost per batch and a marginal cost per event.
 */
export async function costProfile(url, durationMs, pid) {
  const rows = [];
  for (const replication of [1, 2]) {
    const id = `cost-r${replication}`;
    await createDataflow(url, id, specFor(id, 1, replication));
    for (const size of [10, 100, 1000]) {
      const random = prng(size);
      const stopAt = performance.now() + durationMs;
      const cpu0 = workerdCpuSeconds(pid);
      const { acks } = await runLoad({ url, token: TOKEN, stream: id, concurrency: 4, producerPrefix: `${id}-${size}`, stopAt: () => performance.now() >= stopAt, nextBatch: () => makeBatch(random, size, KEYS, 1_000) });
      const cpu = workerdCpuSeconds(pid) - cpu0;
      rows.push({ replication, batchSize: size, batches: acks.length, cpuMicrosPerBatch: (cpu * 1e6) / acks.length });
    }
  }
  const fit = (replication) => {
    const pts = rows.filter((r) => r.replication === replication);
    const n = pts.length;
    const mx = pts.reduce((a, p) => a + p.batchSize, 0) / n;
    const my = pts.reduce((a, p) => a + p.cpuMicrosPerBatch, 0) / n;
    const slope = pts.reduce((a, p) => a + (p.batchSize - mx) * (p.cpuMicrosPerBatch - my), 0) / pts.reduce((a, p) => a + (p.batchSize - mx) ** 2, 0);
    return { replication, fixedMicrosPerBatch: my - slope * mx, marginalMicrosPerEvent: slope };
  };
  return { rows, fits: [fit(1), fit(2)] };
}

/** Keys that land in each partition, so a producer's batches touch exactly one partition. */
function keysByPartition(partitions, perPartition) {
  const buckets = Array.from({ length: partitions }, () => []);
  for (let i = 0; buckets.some((b) => b.length < perPartition); i++) {
    const key = `page-${i}`;
    const bucket = buckets[partitionFor(key, partitions)];
    if (bucket.length < perPartition) bucket.push(key);
  }
  return buckets;
}

/**
 * Crash (or hang, or slow: `kind`) the primary of partition 0 under steady load; measure the
 * gap, the others, and exactness. `id` names the dataflow (a fresh one per run).
 */
export async function failover(url, durationMs, crashAtMs, kind = "crash", id = "failover") {
  const partitions = 4;
  const dataflow = await createDataflow(url, id, specFor(id, partitions, 2));
  const keys = keysByPartition(partitions, 500);
  const random = prng(7);
  const started = performance.now();
  const stopAt = started + durationMs;
  let faultAtEpochMs = 0;
  const crash = (async () => {
    await sleep(crashAtMs);
    const crashedAt = performance.now();
    faultAtEpochMs = Date.now();
    await injectFault(url, dataflow.partitions[0].primary, kind);
    return crashedAt;
  })();
  const { acks, rejected } = await runLoad({
    url,
    token: TOKEN,
    stream: id,
    concurrency: partitions * 2,
    producerPrefix: id,
    stopAt: () => performance.now() >= stopAt,
    nextBatch: (producer) => makeBatch(random, BATCH, keys[producer % partitions].length, 1_000, (i) => keys[producer % partitions][i]),
  });
  const crashedAt = await crash;
  const p0 = acks.filter((a) => a.producer % partitions === 0).map((a) => a.atMs).sort((a, b) => a - b);
  let gapMs = 0;
  let previous = crashedAt;
  for (const at of p0.filter((t) => t >= crashedAt)) {
    gapMs = Math.max(gapMs, at - previous);
    previous = at;
  }
  const bucketMs = 250;
  const series = [];
  for (let t = 0; t < durationMs; t += bucketMs) {
    const inBucket = acks.filter((a) => a.atMs - started >= t && a.atMs - started < t + bucketMs);
    const rate = (list) => list.reduce((n, a) => n + a.events, 0) / (bucketMs / 1000);
    series.push({ tMs: t, partition0: rate(inBucket.filter((a) => a.producer % partitions === 0)), others: rate(inBucket.filter((a) => a.producer % partitions !== 0)) });
  }
  // Per key, so a loss and a duplicate cannot cancel out.
  const expected = new Map();
  for (const a of acks) for (const key of a.keys) expected.set(key, (expected.get(key) ?? 0) + 1);
  const got = new Map();
  for (const r of await allResults(url, id)) got.set(r.key, (got.get(r.key) ?? 0) + r.values.n);
  let lost = 0;
  let duplicated = 0;
  for (const key of new Set([...expected.keys(), ...got.keys()])) {
    const diff = (got.get(key) ?? 0) - (expected.get(key) ?? 0);
    if (diff > 0) duplicated += diff;
    else lost -= diff;
  }
  const counted = [...got.values()].reduce((a, b) => a + b, 0);
  const acked = acks.reduce((n, a) => n + a.events, 0);
  const status = await api(url, "GET", "/v1/status");
  const events = status.body.dataflows.find((d) => d.id === id).events.map((e) => `${e.at} ${e.kind}: ${e.detail}`);
  return {
    kind,
    faultAtEpochMs,
    firstAcksAfterFaultMs: p0.filter((t) => t >= crashedAt).slice(0, 5).map((t) => Math.round(t - crashedAt)),
    crashAtMs: crashedAt - started,
    unavailabilityMs: gapMs,
    rejected,
    acked,
    counted,
    lost,
    duplicated,
    othersEventsPerSecondBefore: rateOf(acks.filter((a) => a.producer % partitions !== 0 && a.atMs < crashedAt), crashedAt - started),
    othersEventsPerSecondAfter: rateOf(acks.filter((a) => a.producer % partitions !== 0 && a.atMs >= crashedAt), stopAt - crashedAt),
    series,
    events,
  };
}

function rateOf(acks, ms) {
  return acks.reduce((n, a) => n + a.events, 0) / (ms / 1000);
}

/** Every result of a dataflow, page by page. */
async function allResults(url, id) {
  const all = [];
  for (let after = null; ; ) {
    const query = `?limit=10000${after ? `&after=${encodeURIComponent(after)}` : ""}`;
    const res = await api(url, "GET", `/v1/dataflows/${id}/results${query}`);
    if (res.status !== 200) throw new Error(`results ${id}: ${res.status}`);
    all.push(...res.body.results);
    if (!res.body.next) return all;
    after = res.body.next;
  }
}

export async function countedEvents(url, id) {
  return (await allResults(url, id)).reduce((n, r) => n + r.values.n, 0);
}

/**
 * One partition of `keys` keys loses its standby and a fresh one is seeded under ingest.
 * With `timeCheckpoint`, then times a checkpoint of the whole state (`checkpointStall`).
 * `beforeSeed()`, if given, is awaited after the fill, before the baseline load (a profiler starts there).
 */
export async function recovery(url, keys, sampleMs, log, timeCheckpoint = false, beforeSeed = async () => {}) {
  const id = `recovery-${keys}`;
  const dataflow = await createDataflow(url, id, specFor(id, 1, 2));
  const fill = 2_000;
  for (let from = 0, seq = 1; from < keys; from += fill, seq++) {
    const events = Array.from({ length: Math.min(fill, keys - from) }, (_, i) => ({ page: `k${from + i}`, ts: 1_000, bytes: 1 }));
    const res = await api(url, "POST", `/v1/streams/${id}/events`, events, { "flux-producer-id": "fill", "flux-seq": String(seq) });
    if (res.status !== 200) throw new Error(`fill ${id}: ${res.status} ${JSON.stringify(res.body)}`);
    if (seq % 50 === 0) log(`  filled ${from + fill} keys`);
  }
  await beforeSeed();
  const random = prng(keys);
  const load = (stopAt, prefix) =>
    runLoad({ url, token: TOKEN, stream: id, concurrency: 4, producerPrefix: prefix, stopAt, nextBatch: () => makeBatch(random, BATCH, 1_000, 1_000, (i) => `k${i}`) });
  const baselineEnd = performance.now() + sampleMs;
  const baseline = await load(() => performance.now() >= baselineEnd, `${id}-before`);
  const baselineRate = rateOf(baseline.acks, sampleMs);

  const probe = stallProbe(url);
  await injectFault(url, dataflow.partitions[0].standby, "crash");
  let finished = null;
  let started = null;
  const deadline = performance.now() + 120_000;
  const watcher = (async () => {
    while (!finished && performance.now() < deadline) {
      await sleep(100);
      const status = await api(url, "GET", "/v1/status");
      const events = status.body.dataflows.find((d) => d.id === id).events;
      started ??= events.find((e) => e.kind === "recovery-started")?.at ?? null;
      finished = events.find((e) => e.kind === "recovery-finished")?.at ?? null;
    }
  })();
  const during = await load(() => finished !== null || performance.now() >= deadline, `${id}-during`);
  await watcher;
  const samples = await probe.stop();
  if (!started || !finished) {
    const status = await api(url, "GET", "/v1/status");
    const events = status.body.dataflows.find((d) => d.id === id).events.map((e) => `${e.at} ${e.kind}: ${e.detail}`);
    throw new Error(`recovery of ${id} did not finish within 120 s; monitor events:\n${events.join("\n")}`);
  }
  const seedMs = Date.parse(finished) - Date.parse(started);
  // Monitor events carry wall-clock times; acknowledgements carry performance.now().
  const offset = Date.now() - performance.now();
  const from = Date.parse(started) - offset;
  const to = Date.parse(finished) - offset;
  const duringRate = rateOf(during.acks.filter((a) => a.atMs >= from && a.atMs <= to), Math.max(1, to - from));
  const longest = longestProbe(samples, from, to);
  // Last, so the seeding numbers are not measured in its wake.
  const checkpoint = timeCheckpoint ? await checkpointStall(url, id, keys, log) : null;
  const idleSeedMs = await idleSeed(url, id, dataflow.partitions[0].primary);
  return { keys, seedMs, baselineEventsPerSecond: baselineRate, duringEventsPerSecond: duringRate, ratio: duringRate / baselineRate, longestSeedStallMs: longest?.ms ?? 0, longestSeedStallAtMs: longest?.atMs ?? null, checkpoint, idleSeedMs };
}

/**
 * The same partition loses its (new) standby again with no writes arriving: the time from
 * `recovery-started` to `recovery-finished` of that second recovery, ms (null: not within 120 s).
 */
async function idleSeed(url, id, formerPrimary) {
  const routeOf = async () => (await api(url, "GET", "/v1/status")).body.dataflows.find((d) => d.id === id);
  const standby = (await routeOf()).partitions[0].replicas.find((r) => r.role === "standby" && r.name !== formerPrimary)?.name;
  if (!standby) return null;
  await injectFault(url, standby, "crash");
  const deadline = performance.now() + 120_000;
  while (performance.now() < deadline) {
    await sleep(100);
    const events = (await routeOf()).events;
    const started = events.filter((e) => e.kind === "recovery-started").at(-1);
    const finished = events.filter((e) => e.kind === "recovery-finished");
    if (started && finished.length >= 2) return Date.parse(finished.at(-1).at) - Date.parse(started.at);
  }
  return null;
}
