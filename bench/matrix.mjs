// The throughput matrix of issue 12: Flux R=1, Flux R=2, the plain baseline (bench/plain) and
// the simpler one of issue 30 (bench/simple),
// each at P = 1, 4, 16 and batch sizes 10, 100, 1000, measured side by side in one run.
// Per cell: events/s, p50/p99, workerd CPU per event, counted calls and rows per 1,000 events
// and US dollars per million events.
import { costPerEvents, counterDelta } from "./costs.mjs";
import { api, readCounters, TOKEN, workerdCpuSeconds } from "./harness.mjs";
import { makeBatch, prng, runLoad, summarize } from "./load.mjs";
import { createDataflow, specFor } from "./scenarios.mjs";
import { partitionFor } from "../shared/partitioner.ts";

const KEYS = 10_000;
const CONCURRENCY = 8;

const MODES = [
  { mode: "flux", replication: 1, label: "Flux R=1" },
  { mode: "flux", replication: 2, label: "Flux R=2" },
  { mode: "plain", replication: null, label: "plain" },
  { mode: "simple", replication: null, label: "simple" },
];
/** The product at an earlier commit (`--before <ref>`), in its own workerd. */
const BEFORE = [
  { mode: "before", replication: 1, label: "Flux R=1 before" },
  { mode: "before", replication: 2, label: "Flux R=2 before" },
];

/** Where a cell's batches go, and how to set it up and tear it down. */
function target(instances, { mode, replication }, partitions, batchSize, concurrency, round) {
  // A repeated cell (`--cells --rounds N`) gets streams of its own: a baseline checks its stream's count.
  const suffix = `${batchSize === 100 ? "" : `-b${batchSize}`}${concurrency === CONCURRENCY ? "" : `-c${concurrency}`}${round === 0 ? "" : `-round${round}`}`;
  if (mode === "plain" || mode === "simple") {
    const stream = `${mode}-p${partitions}${suffix}`;
    return {
      instance: instances[mode],
      stream,
      path: `/v1/streams/${stream}/events?partitions=${partitions}`,
      setUp: async () => {},
      counted: async () => (await api(instances[mode].url, "GET", `/v1/streams/${stream}/count?partitions=${partitions}`)).body.events,
      tearDown: async () => {},
    };
  }
  const id = `tp-p${partitions}-r${replication}${suffix}`;
  const url = instances[mode].url;
  return {
    instance: instances[mode],
    stream: id,
    path: `/v1/streams/${id}/events`,
    setUp: () => createDataflow(url, id, specFor(id, partitions, replication)),
    counted: null,
    // Deleted so that the monitor's probes of earlier cells stay out of later cells' counters.
    tearDown: async () => {
      const res = await api(url, "DELETE", `/v1/dataflows/${id}`);
      if (res.status !== 200 && res.status !== 202) throw new Error(`delete ${id}: ${res.status} ${JSON.stringify(res.body)}`);
    },
  };
}

/** One cell: warm up, then closed-loop load for `durationMs` with counters and CPU read around it. */
export async function matrixCell(instances, selfRequests, { modeSpec, partitions, batchSize, durationMs, concurrency = CONCURRENCY, round = 0 }) {
  const t = target(instances, modeSpec, partitions, batchSize, concurrency, round);
  await t.setUp();
  const random = prng(partitions * 1000 + (modeSpec.replication ?? 3) * 10 + batchSize);
  // Sub-batches per posted batch (partitions it touches), so a baseline's counters can be checked.
  let touched = 0;
  const load = (ms, prefix) => {
    const stopAt = performance.now() + ms;
    const nextBatch = () => {
      const batch = makeBatch(random, batchSize, KEYS, 1_000);
      touched += new Set(batch.map((e) => partitionFor(e.page, partitions))).size;
      return batch;
    };
    return runLoad({ url: t.instance.url, token: TOKEN, stream: t.stream, path: t.path, concurrency, producerPrefix: prefix, stopAt: () => performance.now() >= stopAt, nextBatch });
  };
  const warm = await load(Math.min(1_000, durationMs / 2), `${t.stream}-warm`);
  const counters0 = await readCounters(t.instance.url);
  touched = 0;
  const cpu0 = workerdCpuSeconds(t.instance.pid);
  const started = performance.now();
  const { acks, rejected } = await load(durationMs, t.stream);
  const elapsed = performance.now() - started;
  const cpu = workerdCpuSeconds(t.instance.pid) - cpu0;
  const counters1 = await readCounters(t.instance.url);
  const summary = summarize(acks, elapsed);
  const cpuMicrosPerEvent = (cpu * 1e6) / summary.events;
  const delta = counterDelta(counters0, counters1, selfRequests[modeSpec.mode]);
  let exact = null;
  if (t.counted) {
    // The baseline makes one call and writes one row per sub-batch, and serves one request per batch: its counters must say so.
    const expected = { callsTotal: touched, rowsWritten: touched, workerRequests: acks.length };
    for (const [field, n] of Object.entries(expected)) {
      if (delta[field] !== n) throw new Error(`${t.stream}: counted ${delta[field]} ${field}, expected ${n}`);
    }
    const acked = [...warm.acks, ...acks].reduce((n, a) => n + a.events, 0);
    exact = (await t.counted()) === acked;
    if (!exact) throw new Error(`${t.stream}: the ${modeSpec.label} baseline lost or duplicated events`);
  }
  await t.tearDown();
  return {
    mode: modeSpec.mode,
    label: modeSpec.label,
    replication: modeSpec.replication,
    partitions,
    batchSize,
    concurrency,
    durationMs,
    ...summary,
    rejected,
    cpuMicrosPerEvent,
    counters: delta,
    cost: costPerEvents(delta, summary.events, cpuMicrosPerEvent),
    countedExactly: exact,
  };
}

/**
 * The cells a run measures: every design at P = 1, 4, 16 with 100-event batches (and the
 * "before" build, if any, next to them), then the other batch sizes.
 */
export function matrixPlan(quick, durationMs, withBefore) {
  const cells = [];
  for (const partitions of [1, 4, 16]) for (const m of withBefore ? [...MODES, ...BEFORE] : MODES) cells.push({ modeSpec: m, partitions, batchSize: 100, durationMs });
  // Quick (CI smoke): the other batch sizes at P=4 only.
  for (const batchSize of [10, 1000]) {
    for (const partitions of quick ? [4] : [1, 4, 16]) for (const m of MODES) cells.push({ modeSpec: m, partitions, batchSize, durationMs: durationMs / 2 });
  }
  return cells;
}

/** Low load: one producer, P=4, R=2, 100-event batches (now, and before if measured). */
export function lowLoadPlan(durationMs, withBefore) {
  return [...MODES, ...(withBefore ? BEFORE : [])].filter((m) => m.replication === 2).map((m) => ({ modeSpec: m, partitions: 4, batchSize: 100, durationMs, concurrency: 1 }));
}

/**
 * `cells` run `rounds` times, every other round in reverse order, so that a drift of the
 * machine's speed during the run (or a cold process in the first cells) weighs on every
 * design alike.
 */
export function inRounds(cells, rounds) {
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error("--rounds takes a whole number of rounds");
  return Array.from({ length: rounds }, (_, round) => (round % 2 === 0 ? cells : [...cells].reverse()).map((c) => ({ ...c, round }))).flat();
}

/**
 * Per cell (design, P, batch size, producers), the round with the median events/s, whole
 * (its latencies, CPU and counters belong together), with every round's events/s and CPU
 * per event in `rounds`. An even number of rounds takes the slower of the middle two.
 */
export function medianRounds(results) {
  return roundsByCell(results).map((rs) => {
    const sorted = [...rs].sort((a, b) => a.eventsPerSecond - b.eventsPerSecond);
    return { ...sorted[Math.floor((sorted.length - 1) / 2)], rounds: rs.map((r) => ({ eventsPerSecond: r.eventsPerSecond, cpuMicrosPerEvent: r.cpuMicrosPerEvent })) };
  });
}

/** The results of each cell (design, P, batch size, producers), its rounds in run order. */
function roundsByCell(results) {
  const groups = new Map();
  for (const r of results) {
    const id = `${r.label}|${r.partitions}|${r.batchSize}|${r.concurrency}`;
    if (!groups.has(id)) groups.set(id, []);
    groups.get(id).push(r);
  }
  return [...groups.values()];
}

/** Per cell (design, P, producers), the median of its rounds' events/s, p50 and CPU per event. */
export function cellMedians(results) {
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  return roundsByCell(results).map((rs) => ({
    label: rs[0].label,
    partitions: rs[0].partitions,
    concurrency: rs[0].concurrency,
    runs: rs.length,
    eventsPerSecond: median(rs.map((r) => r.eventsPerSecond)),
    p50Ms: median(rs.map((r) => r.p50Ms)),
    cpuMicrosPerEvent: median(rs.map((r) => r.cpuMicrosPerEvent)),
  }));
}
