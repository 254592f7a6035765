// Issue 29's control-plane benchmark: N dataflows (P partitions, R=2) in one workerd of a
// traced build (bench/trace), each on its own stream receiving a trickle (one 10-event batch a
// second), while readers read a page of results of random dataflows at a steady rate. Run on this build and
// on the one before issue 29 (one coordinator for everything), side by side. From the trace:
// calls received per object per second, by kind of object, over a measured window; the
// busiest control-plane object (registry, monitors, directories) and its share of the
// platform's soft limit of about 1,000 requests per second per object. Also: the time to
// create and then delete the N dataflows, and the fail-over of one partition among them
// (the longest wait for an acknowledgement of a writer to that partition across a primary crash).
import { mkdtempSync } from "node:fs";
import { api, injectFault, removeDir, startFlux, tempDir, TOKEN, workerdCpuSeconds } from "./harness.mjs";
import { createDataflow, specFor } from "./scenarios.mjs";
import { partitionFor } from "../shared/partitioner.ts";

const TRICKLE_EVENTS = 10;
const TRICKLE_EVERY_MS = 1_000;
const READERS = 8;
/**
 * Reads per second of all readers together: a burst the one local thread can serve beside the
 * trickle (readers that read back to back would fill it whatever the design, and every
 * other figure would then measure the queue behind them).
 */
const READS_PER_S = 100;
/** Creations and deletions in flight at once (as a deployment script would run them). */
const ADMIN_CONCURRENCY = 8;
/** The platform's soft limit on requests one object serves per second. */
const OBJECT_LIMIT_PER_S = 1_000;
const CONTROL_KINDS = ["coordinator", "monitor", "directory"];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function readActivity(url) {
  const res = await fetch(`${url}/bench/activity`);
  if (res.status !== 200) throw new Error(`activity: ${res.status}`);
  return res.json();
}

/** Runs `work(item)` over `items`, `concurrency` at a time. */
async function pool(items, concurrency, work) {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < items.length) await work(items[next++]);
  }));
}

async function post(url, stream, producer, seq, events) {
  for (;;) {
    const res = await fetch(`${url}/v1/streams/${stream}/events`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", "flux-producer-id": producer, "flux-seq": String(seq) },
      body: JSON.stringify(events),
    });
    await res.arrayBuffer();
    if (res.status === 200) return;
    if (res.status !== 503) throw new Error(`post to ${stream}: ${res.status}`);
    await sleep(20);
  }
}

/** Each stream gets one batch every TRICKLE_EVERY_MS, spread over the period, until `stop()`. */
async function trickle(url, streams, stop) {
  await Promise.all(streams.map(async (stream, i) => {
    await sleep((i * TRICKLE_EVERY_MS) / streams.length);
    for (let seq = 1; !stop(); seq++) {
      const started = performance.now();
      const events = Array.from({ length: TRICKLE_EVENTS }, (_, k) => ({ page: `page-${(seq * 7 + k) % 50}`, ts: Date.now(), bytes: k }));
      await post(url, stream, `trickle-${stream}`, seq, events);
      await sleep(Math.max(0, TRICKLE_EVERY_MS - (performance.now() - started)));
    }
  }));
}

/**
 * READERS readers read a page of results of a random dataflow each, READS_PER_S in all, until
 * `stop()` (a 503 of a partition failing over is retried). @returns reads answered, and 503s.
 */
async function readers(url, ids, stop) {
  const done = { reads: 0, unavailable: 0 };
  const everyMs = (READERS * 1000) / READS_PER_S;
  await Promise.all(Array.from({ length: READERS }, async (_, r) => {
    await sleep((r * everyMs) / READERS);
    for (let i = r; !stop(); i += READERS) {
      const started = performance.now();
      const res = await api(url, "GET", `/v1/dataflows/${ids[(i * 7919) % ids.length]}/results?limit=10`);
      await sleep(Math.max(0, everyMs - (performance.now() - started)));
      if (res.status === 503) {
        done.unavailable += 1;
        await sleep(20);
      } else if (res.status !== 200) throw new Error(`results: ${res.status} ${JSON.stringify(res.body)}`);
      else done.reads += 1;
    }
  }));
  return done;
}

/** Calls each object received in [fromMs, toMs), per second, grouped by kind. */
function rates(activity, fromMs, toMs) {
  const seconds = (toMs - fromMs) / 1000;
  const byKind = {};
  for (const [object, { calls, atMs }] of Object.entries(activity)) {
    const kind = object.slice(0, object.indexOf(" "));
    const n = atMs.filter((t) => t >= fromMs && t < toMs).length;
    const entry = (byKind[kind] ??= { objects: 0, calls: 0, busiestPerS: 0, busiestMethods: null });
    entry.objects += 1;
    entry.calls += n;
    if (n / seconds > entry.busiestPerS) {
      entry.busiestPerS = n / seconds;
      entry.busiestMethods = calls;
    }
  }
  for (const entry of Object.values(byKind)) {
    entry.callsPerS = entry.calls / seconds;
    entry.perObjectPerS = entry.calls / seconds / entry.objects;
  }
  return byKind;
}

/**
 * Fail-over of partition 0 of dataflow `id` among the others: a writer posts batches for that
 * partition one after another; its primary crashes; the longest wait for an acknowledgement
 * across the crash is the partition's unavailability, as a client sees it.
 */
async function failover(url, id, stream, partitions) {
  const { body } = await api(url, "GET", `/v1/dataflows/${id}`);
  const primary = body.dataflow.partitions[0].primary;
  const pages = Array.from({ length: 200 }, (_, i) => `fo-${i}`).filter((p) => partitionFor(p, partitions) === 0);
  const acks = [];
  let crashedAt = null;
  let seq = 0;
  const writer = (async () => {
    while (crashedAt === null || performance.now() - crashedAt < 4_000) {
      seq += 1;
      await post(url, stream, "failover-writer", seq, pages.slice(0, 5).map((page) => ({ page, ts: Date.now(), bytes: 1 })));
      acks.push(performance.now());
      await sleep(10);
    }
  })();
  await sleep(1_000);
  crashedAt = performance.now();
  await injectFault(url, primary, "crash");
  await writer;
  const after = acks.filter((t) => t >= crashedAt);
  let gapMs = 0;
  let previous = crashedAt;
  for (const t of after) {
    gapMs = Math.max(gapMs, t - previous);
    previous = t;
  }
  return { unavailabilityMs: Math.round(gapMs), acksAfter: after.length };
}

/**
 * A fresh directory for an instance's state: on tmpfs when there is one. Local workerd's
 * SQLite calls fsync at every commit, and with 1,600 replicas those, not CPU, would set the
 * pace (bench/tmpfs-cells.mjs says more); the platform does not pay them in that form.
 */
function stateDir() {
  try {
    return mkdtempSync("/dev/shm/flux-bench-control-");
  } catch {
    return tempDir("flux-bench-control-");
  }
}

/** One size: `n` dataflows of `partitions` partitions in a fresh workerd of `build`. */
async function atSize(build, n, partitions, measureMs, log) {
  const persist = stateDir();
  const flux = await startFlux(build.path, persist);
  try {
    const ids = Array.from({ length: n }, (_, i) => `cp-${i}`);
    let started = performance.now();
    await pool(ids, ADMIN_CONCURRENCY, (id) => createDataflow(flux.url, id, specFor(id, partitions, 2)));
    const createMs = performance.now() - started;
    log(`control plane (${build.label}): ${n} dataflows of ${partitions} partitions created in ${(createMs / 1000).toFixed(1)} s`);
    let stopping = false;
    const load = trickle(flux.url, ids, () => stopping);
    await sleep(3_000);
    const reading = readers(flux.url, ids, () => stopping);
    await sleep(2_000);
    const fromMs = Date.now();
    const cpu0 = workerdCpuSeconds(flux.pid);
    await sleep(measureMs);
    const toMs = Date.now();
    const cpuShare = (workerdCpuSeconds(flux.pid) - cpu0) / (measureMs / 1000);
    const byKind = rates(await readActivity(flux.url), fromMs, toMs);
    const fail = await failover(flux.url, ids[0], ids[0], partitions);
    stopping = true;
    const reads = await reading;
    await load;
    started = performance.now();
    await pool(ids, ADMIN_CONCURRENCY, async (id) => {
      const res = await api(flux.url, "DELETE", `/v1/dataflows/${id}`);
      if (res.status !== 200 && res.status !== 202) throw new Error(`delete ${id}: ${res.status}`);
    });
    const deleteMs = performance.now() - started;
    const control = CONTROL_KINDS.filter((k) => byKind[k]).map((kind) => ({ kind, ...byKind[kind] }));
    const busiest = control.reduce((a, b) => (b.busiestPerS > a.busiestPerS ? b : a));
    const result = {
      build: build.label,
      dataflows: n,
      partitions,
      replicas: n * partitions * 2,
      createMs: Math.round(createMs),
      deleteMs: Math.round(deleteMs),
      measureMs,
      workerdCpuShare: cpuShare,
      reads,
      byKind,
      busiest: { kind: busiest.kind, callsPerS: busiest.busiestPerS, shareOfLimit: busiest.busiestPerS / OBJECT_LIMIT_PER_S, methods: busiest.busiestMethods },
      failover: fail,
    };
    log(`  busiest control-plane object: a ${busiest.kind}, ${busiest.busiestPerS.toFixed(1)} calls/s; workerd CPU ${(cpuShare * 100).toFixed(0)}%; fail-over ${fail.unavailabilityMs} ms; deleted in ${(deleteMs / 1000).toFixed(1)} s`);
    return result;
  } finally {
    await flux.stop();
    removeDir(persist);
  }
}

/**
 * The scenario for each of `sizes` ({ dataflows, partitions }) on each of `builds`
 * ({ label, path } of traced bundles), each run in its own workerd, the builds in turn per size.
 */
export async function controlPlaneScenario(builds, sizes, measureMs, log) {
  const runs = [];
  for (const { dataflows, partitions } of sizes) for (const build of builds) runs.push(await atSize(build, dataflows, partitions, measureMs, log));
  return { replication: 2, trickle: { events: TRICKLE_EVENTS, everyMs: TRICKLE_EVERY_MS }, readers: READERS, readsPerS: READS_PER_S, objectLimitPerS: OBJECT_LIMIT_PER_S, runs };
}
