// Issue 27's pipeline benchmark: a two-stage pipeline (P=4 -> P=4, R=2) against its first
// stage alone, side by side in one workerd, in alternating rounds: throughput, calls and rows
// written per 1,000 events and dollars per million events; the delay from a window's close
// to the last stage's closed result; and a crash of an upstream primary under load, with the
// stage's stall and its results checked exactly against what was acknowledged.
import { costPerEvents, counterDelta } from "./costs.mjs";
import { api, injectFault, readCounters, removeDir, startFlux, tempDir, TOKEN, workerdCpuSeconds } from "./harness.mjs";
import { prng, runLoad, summarize } from "./load.mjs";

const PARTITIONS = 4;
const PAGES = 1_000;
/** Pages belong to sites: the second stage regroups the first's per-page counts per site (as per host, then per subnet). */
const SITES = 16;
const BATCH = 100;
const CONCURRENCY = 8;
const WINDOW_MS = 1_000;
const LATENESS_MS = 100;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The first stage: views and bytes per page (of a site) per second, event time the wall clock, clock ticks on. */
const firstStage = (stream, latenessMs = LATENESS_MS) => ({
  stream,
  key: ["site", "page"],
  timeField: "ts",
  window: { kind: "tumbling", sizeMs: WINDOW_MS, allowedLatenessMs: latenessMs },
  aggregates: { n: { op: "count" }, bytes: { op: "sum", field: "bytes" } },
  idleAdvanceMs: 0,
  partitions: PARTITIONS,
  replication: 2,
});

/** The second stage: per site, over windows of `sizeMs`, on 4 partitions of its own. */
const secondStage = (from, sizeMs = WINDOW_MS) => ({
  from,
  key: "group.site",
  window: { kind: "tumbling", sizeMs },
  aggregates: { n: { op: "sum", field: "values.n" }, bytes: { op: "sum", field: "values.bytes" } },
  partitions: PARTITIONS,
  replication: 2,
});

async function put(url, id, spec) {
  const res = await api(url, "PUT", `/v1/dataflows/${id}`, spec);
  if (res.status !== 201) throw new Error(`create ${id}: ${res.status} ${JSON.stringify(res.body)}`);
}

async function remove(url, ids) {
  for (const id of ids) {
    const res = await api(url, "DELETE", `/v1/dataflows/${id}`);
    if (res.status !== 200 && res.status !== 202) throw new Error(`delete ${id}: ${res.status} ${JSON.stringify(res.body)}`);
  }
}

/** An event of page `i` (of site `i mod SITES`) timed now. */
const event = (i, bytes) => ({ site: `site-${i % SITES}`, page: `page-${i}`, ts: Date.now(), bytes });

/** Batches of events timed now, over `PAGES` pages. */
function liveBatches(seed) {
  const random = prng(seed);
  return () => Array.from({ length: BATCH }, () => event(Math.floor(random() * PAGES), Math.floor(random() * 1000)));
}

/** One throughput cell: the first stage alone, or with a second stage reading it; counters and CPU around the load. */
async function cell(flux, withStage, durationMs, round) {
  const stream = `pl-${withStage ? "two" : "one"}-${round}`;
  const ids = withStage ? [`${stream}-2`, stream] : [stream];
  await put(flux.url, stream, firstStage(stream));
  if (withStage) await put(flux.url, `${stream}-2`, secondStage(stream));
  const next = liveBatches(round * 10 + (withStage ? 2 : 1));
  const load = (ms, prefix) => {
    const stopAt = performance.now() + ms;
    return runLoad({ url: flux.url, token: TOKEN, stream, concurrency: CONCURRENCY, producerPrefix: prefix, stopAt: () => performance.now() >= stopAt, nextBatch: next });
  };
  await load(1_000, `${stream}-warm`);
  const counters0 = await readCounters(flux.url);
  const cpu0 = workerdCpuSeconds(flux.pid);
  const started = performance.now();
  const { acks, rejected } = await load(durationMs, stream);
  const elapsed = performance.now() - started;
  const cpu = workerdCpuSeconds(flux.pid) - cpu0;
  const counters1 = await readCounters(flux.url);
  const summary = summarize(acks, elapsed);
  const cpuMicrosPerEvent = (cpu * 1e6) / summary.events;
  const delta = counterDelta(counters0, counters1, 1);
  await remove(flux.url, ids);
  return { label: withStage ? "two stages" : "first stage alone", round, ...summary, rejected, cpuMicrosPerEvent, counters: delta, cost: costPerEvents(delta, summary.events, cpuMicrosPerEvent) };
}

/**
 * The delay from each window's close (its end plus the first stage's allowed lateness, when
 * the first stage's clock passes it) to the moment the second stage's result for it is
 * closed, read through the results API every 10 ms, for every partition of the stage (one
 * probe page per partition). Two producers keep a steady load meanwhile.
 */
async function latency(flux, durationMs) {
  const stream = "pl-latency";
  await put(flux.url, stream, firstStage(stream));
  await put(flux.url, `${stream}-2`, secondStage(stream));
  const { partitionFor } = await import("../shared/partitioner.ts");
  // One site per partition of the stage (its result key), and a page of each.
  const probes = [];
  for (let i = 0; probes.length < PARTITIONS && i < SITES; i++) {
    if (!probes.some((p) => partitionFor(p.site, PARTITIONS) === partitionFor(`site-${i}`, PARTITIONS))) probes.push({ site: `site-${i}`, page: i });
  }
  const random = prng(99);
  // Every batch carries the probe sites' pages, so each stage partition has a result in every window.
  const nextBatch = () => [...probes.map((p) => event(p.page, 1)), ...Array.from({ length: 20 }, () => event(Math.floor(random() * PAGES), 1))];
  const stopAt = performance.now() + durationMs;
  const loadDone = runLoad({ url: flux.url, token: TOKEN, stream, concurrency: 2, producerPrefix: stream, stopAt: () => performance.now() >= stopAt, nextBatch });
  const delays = [];
  const firstWindow = Math.ceil((Date.now() + 1_000) / WINDOW_MS) * WINDOW_MS;
  const lastWindow = Math.floor((Date.now() + durationMs - 1_000) / WINDOW_MS) * WINDOW_MS - WINDOW_MS;
  for (let start = firstWindow; start <= lastWindow; start += WINDOW_MS) {
    const closeAtMs = start + WINDOW_MS + LATENESS_MS;
    const pending = new Set(probes.map((p) => p.site));
    while (pending.size > 0 && Date.now() < closeAtMs + 10_000) {
      const res = await api(flux.url, "GET", `/v1/dataflows/${stream}-2/results?from=${start}&to=${start + 1}`);
      const now = Date.now();
      for (const r of res.body.results) {
        if (r.closed && pending.delete(r.key)) delays.push(now - closeAtMs);
      }
      if (pending.size > 0) await sleep(10);
    }
  }
  await loadDone;
  await remove(flux.url, [`${stream}-2`, stream]);
  const sorted = [...delays].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
  return { windows: Math.max(0, (lastWindow - firstWindow) / WINDOW_MS + 1), results: delays.length, p50Ms: at(50), p99Ms: at(99), maxMs: sorted.at(-1) };
}

/**
 * A crash of the first stage's primary of partition 0 under load: its partition's gap, the
 * longest the second stage went without closing a window (its clock waits for the crashed
 * partition's watermark), and the second stage's results per page and window against every
 * acknowledged event (the first stage's lateness is 5 s, so no resent event is late).
 */
async function crash(flux, durationMs, crashAtMs) {
  const stream = "pl-crash";
  const latenessMs = 5_000;
  await put(flux.url, stream, firstStage(stream, latenessMs));
  await put(flux.url, `${stream}-2`, secondStage(stream, 2_000));
  const routing = await api(flux.url, "GET", `/v1/dataflows/${stream}`);
  const victim = routing.body.dataflow.partitions[0].primary;
  const started = performance.now();
  const stopAt = started + durationMs;
  const closes = [];
  let closedThrough = 0;
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const res = await api(flux.url, "GET", `/v1/dataflows/${stream}-2/results?from=${closedThrough}&limit=10000`);
      for (const r of res.body.results) {
        if (r.closed && r.windowStartMs >= closedThrough) {
          closes.push({ atMs: performance.now(), start: r.windowStartMs });
          closedThrough = r.windowStartMs + 1;
        }
      }
      await sleep(50);
    }
  })();
  const crashed = sleep(crashAtMs).then(async () => {
    const at = performance.now();
    await injectFault(flux.url, victim, "crash");
    return at;
  });
  const batches = liveBatches(7);
  const sent = new Map();
  const nextBatch = (producer, seq) => {
    const events = batches();
    sent.set(`${producer}#${seq}`, events);
    return events;
  };
  const { acks } = await runLoad({ url: flux.url, token: TOKEN, stream, concurrency: CONCURRENCY, producerPrefix: stream, stopAt: () => performance.now() >= stopAt, nextBatch });
  const crashedAt = await crashed;
  const acked = acks.flatMap((a) => sent.get(`${a.producer}#${a.seq}`) ?? []);
  const lastTs = acked.reduce((most, e) => Math.max(most, e.ts), 0);
  // The stage closes the last windows once the first stage's ticks pass their end + lateness.
  const wantThrough = Math.floor(lastTs / 2_000) * 2_000;
  const deadline = performance.now() + latenessMs + 20_000;
  while (closedThrough <= wantThrough && performance.now() < deadline) await sleep(100);
  polling = false;
  await poller;
  let gapMs = 0;
  for (let i = 1; i < closes.length; i++) if (closes[i].atMs > crashedAt - 2_000) gapMs = Math.max(gapMs, closes[i].atMs - closes[i - 1].atMs);
  const expected = new Map();
  for (const e of acked) {
    const id = `${e.site}@${Math.floor(e.ts / 2_000) * 2_000}`;
    expected.set(id, (expected.get(id) ?? 0) + 1);
  }
  const got = new Map();
  for (let after = null; ; ) {
    const res = await api(flux.url, "GET", `/v1/dataflows/${stream}-2/results?limit=10000${after ? `&after=${encodeURIComponent(after)}` : ""}`);
    for (const r of res.body.results) got.set(`${r.key}@${r.windowStartMs}`, r.values.n);
    if (!res.body.next) break;
    after = res.body.next;
  }
  let lost = 0;
  let duplicated = 0;
  for (const key of new Set([...expected.keys(), ...got.keys()])) {
    const diff = (got.get(key) ?? 0) - (expected.get(key) ?? 0);
    if (diff > 0) duplicated += diff;
    else lost -= diff;
  }
  // Every batch touches every partition of the first stage: the longest wait for an acknowledgement after the crash is partition 0's.
  const after = acks.map((a) => a.atMs).filter((t) => t >= crashedAt).sort((a, b) => a - b);
  let ingestGapMs = 0;
  let previous = crashedAt;
  for (const t of after) {
    ingestGapMs = Math.max(ingestGapMs, t - previous);
    previous = t;
  }
  const status = await api(flux.url, "GET", "/v1/status");
  const events = status.body.dataflows.find((d) => d.id === stream).events.map((e) => `${e.kind}: ${e.detail}`);
  await remove(flux.url, [`${stream}-2`, stream]);
  // Windows close one every 2 s when all is well: what the crash added to the stage is the longest gap beyond that.
  return { acked: acked.length, lost, duplicated, stageLongestGapMs: Math.round(gapMs), stageStallMs: Math.max(0, Math.round(gapMs - 2_000)), allClosed: closedThrough > wantThrough, ingestGapMs: Math.round(ingestGapMs), events };
}

/** The whole scenario in a workerd of its own; `rounds` alternating throughput rounds. */
export async function pipelineScenario(scriptPath, { durationMs, rounds, latencyMs, crashMs }, log) {
  const persist = tempDir("flux-bench-pipeline-");
  const flux = await startFlux(scriptPath, persist);
  try {
    const cells = [];
    for (let round = 0; round < rounds; round++) {
      for (const withStage of round % 2 === 0 ? [false, true] : [true, false]) {
        const c = await cell(flux, withStage, durationMs, round);
        cells.push(c);
        log(`  ${c.label} (round ${round + 1}): ${Math.round(c.eventsPerSecond)} events/s, ${c.cost.per1k.calls.toFixed(1)} calls + ${c.cost.per1k.rowsWritten.toFixed(1)} rows written /1k events, $${c.cost.usdPerMillion.total.toFixed(4)}/M`);
      }
    }
    const lat = await latency(flux, latencyMs);
    log(`  stage result after the window's close: p50 ${lat.p50Ms} ms, p99 ${lat.p99Ms} ms over ${lat.results} results of ${lat.windows} windows`);
    const failover = await crash(flux, crashMs, Math.round(crashMs / 3));
    log(`  upstream primary crashed: stage's longest gap between closes ${failover.stageLongestGapMs} ms; lost ${failover.lost}, duplicated ${failover.duplicated} of ${failover.acked}`);
    return { cells, latency: lat, crash: failover };
  } finally {
    await flux.stop();
    removeDir(persist);
  }
}
