// Issue 28's rescale benchmark: a window-aggregate dataflow on 4 partitions (R=2) under a
// closed-loop load grows to 8 partitions while the load goes on. Measured: ingest before and
// while the key groups move (the same load, the status polled at the same pace in both), the
// time from the PUT until every move ended, how long each group's posts waited (the monitor's
// move events), the 503s producers resent, and the results against every acknowledged event
// (nothing lost, nothing counted twice). Local workerd runs every object on one thread, so the
// eight partitions do not add throughput here; what matters is what moving costs ingest.
import { api, removeDir, startFlux, tempDir, TOKEN } from "./harness.mjs";
import { makeBatch, prng, runLoad, summarize } from "./load.mjs";

const FROM = 4;
const TO = 8;
const KEYS = 20_000;
const BATCH = 100;
const CONCURRENCY = 8;
/** How often both phases read `/v1/status` (the rescale phase to see the moves end). */
const POLL_MS = 500;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One window that never closes: every key's count is the number of its acknowledged events. */
const spec = (stream, partitions) => ({
  stream,
  key: "page",
  timeField: "ts",
  window: { kind: "tumbling", sizeMs: 3_600_000 },
  aggregates: { n: { op: "count" }, bytes: { op: "sum", field: "bytes" } },
  partitions,
  replication: 2,
});

async function dataflowStatus(url, id) {
  const res = await api(url, "GET", "/v1/status");
  return res.body.dataflows.find((d) => d.id === id);
}

/** Load until `done()` (polled every {@link POLL_MS} ms along with the status), or `maxMs`. @returns acks, 503s, duration and the last status. */
async function phase(url, stream, prefix, seed, done, maxMs) {
  const random = prng(seed);
  let stop = false;
  const started = performance.now();
  const load = runLoad({ url, token: TOKEN, stream, concurrency: CONCURRENCY, producerPrefix: prefix, stopAt: () => stop, nextBatch: () => makeBatch(random, BATCH, KEYS, 1_000) });
  let status = null;
  while (!stop) {
    await sleep(POLL_MS);
    status = await dataflowStatus(url, stream);
    stop = done(status, performance.now() - started) || performance.now() - started >= maxMs;
  }
  const { acks, rejected } = await load;
  return { acks, rejected, ms: performance.now() - started, status };
}

/** Counts per key served by the results API, page by page. */
async function served(url, id) {
  const got = new Map();
  for (let after = ""; after !== null; ) {
    const res = await api(url, "GET", `/v1/dataflows/${id}/results?limit=10000${after ? `&after=${encodeURIComponent(after)}` : ""}`);
    for (const r of res.body.results) got.set(r.key, (got.get(r.key) ?? 0) + r.values.n);
    after = res.body.next ?? null;
  }
  return got;
}

export async function rescaleScenario(scriptPath, { beforeMs, maxMs }, log) {
  const persist = tempDir("flux-bench-rescale-");
  const flux = await startFlux(scriptPath, persist);
  const id = "rescale";
  try {
    const created = await api(flux.url, "PUT", `/v1/dataflows/${id}`, spec(id, FROM));
    if (created.status !== 201) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
    // Warm up, and give every key state before anything moves.
    const warm = await phase(flux.url, id, "warm", 1, () => false, 2_000);
    const before = await phase(flux.url, id, "before", 2, () => false, beforeMs);
    const put = await api(flux.url, "PUT", `/v1/dataflows/${id}`, spec(id, TO));
    if (put.status !== 202) throw new Error(`grow: ${put.status} ${JSON.stringify(put.body)}`);
    const during = await phase(flux.url, id, "during", 3, (s) => s.moves.length === 0, maxMs);
    const finished = during.status.moves.length === 0;
    const events = during.status.events.filter((e) => e.kind === "move-finished" || e.kind === "move-given-up");
    const waits = events.map((e) => Number(/waited (\d+) ms/.exec(e.detail)?.[1] ?? NaN)).filter(Number.isFinite).sort((a, b) => a - b);
    // Exactly once: every acknowledged event counted once, wherever its group went.
    const expected = new Map();
    for (const { acks } of [warm, before, during]) for (const a of acks) for (const key of a.keys) expected.set(key, (expected.get(key) ?? 0) + 1);
    const got = await served(flux.url, id);
    let lost = 0;
    let duplicated = 0;
    for (const key of new Set([...expected.keys(), ...got.keys()])) {
      const diff = (got.get(key) ?? 0) - (expected.get(key) ?? 0);
      if (diff < 0) lost -= diff;
      else duplicated += diff;
    }
    const result = {
      from: FROM,
      to: TO,
      keys: KEYS,
      // The moves this rescale queued: the highest move number (the dataflow's first rescale), ended or not.
      queuedMoves: Math.max(0, ...events.map((e) => Number(/^move (\d+):/.exec(e.detail)?.[1] ?? 0)), ...during.status.moves.map((m) => m.id)),
      finished,
      movesEnded: events.length,
      givenUp: events.filter((e) => e.kind === "move-given-up").length,
      totalMs: during.ms,
      before: { ...summarize(before.acks, before.ms), rejected: before.rejected },
      during: { ...summarize(during.acks, during.ms), rejected: during.rejected },
      waits: { count: waits.length, p50Ms: waits[Math.floor((waits.length - 1) / 2)] ?? null, maxMs: waits.at(-1) ?? null },
      groupsPerPartition: during.status.partitions.map((p) => p.keyGroups),
      lost,
      duplicated,
    };
    result.ratio = result.during.eventsPerSecond / result.before.eventsPerSecond;
    return result;
  } finally {
    await flux.stop();
    removeDir(persist);
  }
}
