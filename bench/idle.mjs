// The idle cost of issue 12: one P=4, R=2 dataflow, alone in a fresh workerd, receives a
// short burst and is then left idle for a measured period. Counted: the product's counters
// (rows, calls made), read every few seconds, and, from the traced build (bench/trace), every
// call each object received, from which object-seconds follow under a stated billing model.
import { counterDelta, counterSelfCost, idleCost } from "./costs.mjs";
import { readCounters, removeDir, startFlux, tempDir, TOKEN } from "./harness.mjs";
import { makeBatch, prng, runLoad } from "./load.mjs";
import { nextProbeAtMs } from "../shared/monitor/probe-schedule.ts";
import { createDataflow, specFor } from "./scenarios.mjs";

/** Billing model: an object is billed from a call it receives until this long after its last one (when it could hibernate). */
const BILLED_AFTER_CALL_MS = 10_000;
/** Calls closer than this belong to one monitor round (heartbeats are 500 ms apart, so a busy monitor is one long round). */
const ROUND_GAP_MS = 2_000;
/** How often the counters are read, ms. */
const SLICE_MS = 2_000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function readActivity(url) {
  const res = await fetch(`${url}/bench/activity`);
  if (res.status !== 200) throw new Error(`activity: ${res.status}`);
  return res.json();
}

/** Seconds in [fromMs, toMs) covered by the union of [t, t + BILLED_AFTER_CALL_MS) over call times `atMs`. */
function billedSeconds(atMs, fromMs, toMs) {
  let billed = 0;
  let coveredTo = fromMs;
  for (const t of [...atMs].sort((a, b) => a - b)) {
    const start = Math.max(t, coveredTo);
    const end = Math.min(t + BILLED_AFTER_CALL_MS, toMs);
    if (end > start) billed += end - start;
    coveredTo = Math.max(coveredTo, end);
  }
  return billed / 1000;
}

/** Calls received and object-seconds billed in [fromMs, toMs), over every object (calls before fromMs still bill into it). */
function objectsIn(activity, fromMs, toMs) {
  return Object.entries(activity).map(([object, { atMs }]) => ({
    object: object.replace(/ ([0-9a-f]{8})[0-9a-f]{48,}$/, " $1…"),
    calls: atMs.filter((t) => t >= fromMs && t < toMs).length,
    billedSeconds: billedSeconds(atMs, fromMs, toMs),
  }));
}

/** The monitor's rounds: clusters of calls (any object) less than ROUND_GAP_MS apart. */
function roundsOf(activity, fromMs, toMs) {
  const times = Object.values(activity)
    .flatMap((a) => a.atMs)
    .filter((t) => t >= fromMs && t < toMs)
    .sort((a, b) => a - b);
  const rounds = [];
  for (const t of times) {
    const last = rounds.at(-1);
    if (last && t - last.endMs < ROUND_GAP_MS) last.endMs = t;
    else rounds.push({ startMs: t, endMs: t });
  }
  return rounds;
}

function sumDeltas(deltas) {
  if (deltas.some((d) => d === null)) return null;
  const sum = { calls: {}, callsTotal: 0, rowsRead: 0, rowsWritten: 0, workerRequests: 0 };
  for (const d of deltas) {
    for (const [m, n] of Object.entries(d.calls)) sum.calls[m] = (sum.calls[m] ?? 0) + n;
    for (const k of ["callsTotal", "rowsRead", "rowsWritten", "workerRequests"]) sum[k] += d[k];
  }
  return sum;
}

/**
 * What [fromMs, toMs) cost: calls received (alarms included) and object-seconds from the trace,
 * rows from the counter slices: those overlapping the window, or with `rounds`, those holding
 * a round that starts in it (a round's writes land in the slice of its last call or the next).
 */
function windowCost(activity, slices, fromMs, toMs, rounds = null) {
  const objects = objectsIn(activity, fromMs, toMs);
  const spans = rounds ? rounds.filter((r) => r.startMs >= fromMs && r.startMs < toMs).map((r) => [r.startMs, r.endMs + 1_000]) : [[fromMs, toMs]];
  const counters = sumDeltas(slices.filter((s) => spans.some(([a, b]) => s.toMs > a && s.fromMs < b)).map((s) => s.counters));
  const measured = {
    seconds: (toMs - fromMs) / 1000,
    calls: objects.reduce((n, o) => n + o.calls, 0),
    callsMade: counters?.callsTotal ?? NaN,
    rowsWritten: counters?.rowsWritten ?? NaN,
    rowsRead: counters?.rowsRead ?? NaN,
    objectSeconds: objects.reduce((n, o) => n + o.billedSeconds, 0),
  };
  return { measured, objects, ...idleCost(measured) };
}

/**
 * The idle steady state. The first round runs from the start (the monitor still treats the
 * dataflow as active); once it backs off, later rounds are idle probes. With two or more idle
 * rounds: from the first to the last one's start. With one: that round, over the gap before it
 * (the idle probe period). With none (the monitor never backs off): the second half.
 */
function steadyWindow(rounds, startMs, endMs) {
  const idle = rounds[0] && rounds[0].startMs - startMs < ROUND_GAP_MS ? rounds.slice(1) : rounds;
  if (idle.length >= 2) return { byRounds: true, rounds: idle.length - 1, fromMs: idle[0].startMs, toMs: idle.at(-1).startMs, how: `${idle.length - 1} idle probe round(s), from the first idle round to the start of the last` };
  if (idle.length === 1) {
    const before = rounds[rounds.indexOf(idle[0]) - 1];
    const period = idle[0].startMs - (before?.endMs ?? startMs);
    return { byRounds: true, rounds: 1, fromMs: idle[0].startMs, toMs: idle[0].startMs + period, how: `one idle probe round, over the ${Math.round(period / 1000)} s gap before it (the idle probe period)` };
  }
  return { byRounds: false, fromMs: (startMs + endMs) / 2, toMs: endMs, how: "no idle round (the monitor never backed off): the second half of the period" };
}

/** The schedule settings of the bench's workerd: wrangler.toml's defaults. */
const SCHEDULE = { heartbeatMs: 500, watchProbeMs: 10_000, idleAfterMs: 10_000, idleProbeMs: 1_800_000, missSpacingMs: 250 };
const DAY_MS = 86_400_000;

/**
 * How many idle probe rounds the product's own schedule (`nextProbeAtMs`) makes in the 24 h
 * after a dataflow's last write: heartbeats until it is quiet for `idleAfterMs`, then rounds
 * as far apart as it has been quiet, at most `idleProbeMs`. The measured window is only the
 * start of that back-off, so a day is priced per round, not by scaling the window.
 */
function idleRoundsPerDay() {
  // A dataflow healthy everywhere and without clock ticks, as the bench's: watched by its data path until it is idle.
  const record = { spec: {}, routes: [], moves: [] };
  let rounds = 0;
  for (let t = 0; t < DAY_MS; ) {
    const idle = t >= SCHEDULE.idleAfterMs;
    if (idle) rounds += 1;
    t = nextProbeAtMs({ probedAtMs: t, fingerprint: "", progressAtMs: 0, idle }, record, {}, null, SCHEDULE);
  }
  return rounds;
}

/** A quiet day: the cost per idle round measured in the steady window, times the rounds the schedule makes in a day. */
function quietDay(steadyMeasured, roundsMeasured) {
  if (roundsMeasured === 0) return null;
  const roundsPerDay = idleRoundsPerDay();
  const scale = roundsPerDay / roundsMeasured;
  const { calls, rowsWritten, rowsRead, objectSeconds } = steadyMeasured;
  const perRound = { calls: calls / roundsMeasured, rowsWritten: rowsWritten / roundsMeasured, rowsRead: rowsRead / roundsMeasured, objectSeconds: objectSeconds / roundsMeasured };
  const day = idleCost({ seconds: DAY_MS / 1000, calls: calls * scale, rowsWritten: rowsWritten * scale, rowsRead: rowsRead * scale, objectSeconds: objectSeconds * scale });
  return { roundsPerDay, roundsMeasured, perRound, usdPerDay: day.usdPerDay, schedule: SCHEDULE };
}

/** Runs the idle scenario on `scriptPath` (the traced bundle) for `idleMs`. */
export async function idleScenario(scriptPath, idleMs, log) {
  const persist = tempDir("flux-bench-idle-");
  const flux = await startFlux(scriptPath, persist);
  try {
    const id = "idle-p4-r2";
    await createDataflow(flux.url, id, specFor(id, 4, 2));
    const random = prng(99);
    const stopAt = performance.now() + 1_000;
    await runLoad({ url: flux.url, token: TOKEN, stream: id, concurrency: 4, producerPrefix: id, stopAt: () => performance.now() >= stopAt, nextBatch: () => makeBatch(random, 100, 10_000, 1_000) });
    log(`  burst sent; idle for ${idleMs / 1000} s`);
    const read = () => readCounters(flux.url);
    const selfRequests = await counterSelfCost(read);
    const slices = [];
    let previous = await read();
    const startMs = Date.now();
    while (Date.now() < startMs + idleMs) {
      await sleep(Math.min(SLICE_MS, startMs + idleMs - Date.now()));
      const now = await read();
      slices.push({ fromMs: slices.at(-1)?.toMs ?? startMs, toMs: Date.now(), counters: counterDelta(previous, now, selfRequests) });
      previous = now;
    }
    const endMs = Date.now();
    const activity = await readActivity(flux.url);
    const rounds = roundsOf(activity, startMs, endMs);
    const steady = steadyWindow(rounds, startMs, endMs);
    const whole = windowCost(activity, slices, startMs, endMs);
    const { objects, ...steadyCost } = windowCost(activity, slices, steady.fromMs, steady.toMs, steady.byRounds ? rounds : null);
    const rel = (ms) => Math.round((ms - startMs) / 100) / 10;
    return {
      idleSeconds: whole.measured.seconds,
      billedAfterCallMs: BILLED_AFTER_CALL_MS,
      countersAvailable: slices.every((s) => s.counters !== null),
      rounds: rounds.map((r) => ({ fromS: rel(r.startMs), toS: rel(r.endMs), calls: objectsIn(activity, r.startMs, r.endMs + 1).reduce((n, o) => n + o.calls, 0) })),
      objects: whole.objects,
      whole: { measured: whole.measured, perHour: whole.perHour, usdPerDay: whole.usdPerDay },
      steady: { fromS: rel(steady.fromMs), toS: rel(steady.toMs), how: steady.how, ...steadyCost, objectsCalled: objects.filter((o) => o.calls > 0).length },
      quietDay: steady.byRounds ? quietDay(steadyCost.measured, steady.rounds) : null,
    };
  } finally {
    await flux.stop();
    removeDir(persist);
  }
}
