// The idle cost of issue 12: one P=4, R=2 dataflow, alone in a fresh workerd, receives a
// short burst and is then left idle for a measured period. Counted: the product's counters
// (calls made, rows) and, from the traced build (bench/trace), every call each object
// received, from which object-seconds follow under a stated billing model.
import { counterDelta, counterSelfCost, idleCost } from "./costs.mjs";
import { readCounters, removeDir, startFlux, tempDir, TOKEN } from "./harness.mjs";
import { makeBatch, prng, runLoad } from "./load.mjs";
import { createDataflow, specFor } from "./scenarios.mjs";

/** Billing model: an object is billed from a call it receives until this long after its last one (when it could hibernate). */
const BILLED_AFTER_CALL_MS = 10_000;

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

/** Calls each object received in [fromMs, toMs), by method, and its billed seconds in that window. */
function objectsIn(activity, fromMs, toMs) {
  return Object.entries(activity).map(([object, { atMs }]) => ({
    object,
    calls: atMs.filter((t) => t >= fromMs && t < toMs).length,
    billedSeconds: billedSeconds(atMs, fromMs, toMs),
  }));
}

/** Runs the idle scenario on `scriptPath` (the traced bundle) for `idleMs`, read in `buckets` equal slices. */
export async function idleScenario(scriptPath, idleMs, log, buckets = 6) {
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
    for (let i = 0; i < buckets; i++) {
      await sleep(idleMs / buckets);
      const now = await read();
      slices.push({ fromMs: slices.at(-1)?.toMs ?? startMs, toMs: Date.now(), counters: counterDelta(previous, now, selfRequests) });
      previous = now;
    }
    const endMs = Date.now();
    const activity = await readActivity(flux.url);
    // A window's cost: calls the objects received (alarms included), rows from the counters.
    const windowCost = (fromMs) => {
      const objects = objectsIn(activity, fromMs, endMs);
      const counters = sumDeltas(slices.filter((s) => s.fromMs >= fromMs - 1).map((s) => s.counters));
      const measured = {
        seconds: (endMs - fromMs) / 1000,
        calls: objects.reduce((n, o) => n + o.calls, 0),
        rowsWritten: counters?.rowsWritten ?? NaN,
        rowsRead: counters?.rowsRead ?? NaN,
        objectSeconds: objects.reduce((n, o) => n + o.billedSeconds, 0),
        callsMade: counters?.callsTotal ?? NaN,
      };
      return { measured, objects, ...idleCost(measured) };
    };
    const whole = windowCost(startMs);
    // The second half, once the monitor has had half the period to notice the dataflow is idle.
    const steady = windowCost(slices[Math.floor(buckets / 2)]?.fromMs ?? startMs);
    const short = (object) => object.replace(/ ([0-9a-f]{8})[0-9a-f]{48,}$/, " $1…");
    return {
      idleSeconds: whole.measured.seconds,
      billedAfterCallMs: BILLED_AFTER_CALL_MS,
      countersAvailable: slices.every((s) => s.counters !== null),
      objects: whole.objects.map((o) => ({ ...o, object: short(o.object) })),
      slices: slices.map((s) => ({ fromS: (s.fromMs - startMs) / 1000, toS: (s.toMs - startMs) / 1000, counters: s.counters, callsReceived: objectsIn(activity, s.fromMs, s.toMs).reduce((n, o) => n + o.calls, 0) })),
      whole: { measured: whole.measured, perHour: whole.perHour, usdPerDay: whole.usdPerDay },
      steady: { measured: steady.measured, perHour: steady.perHour, usdPerDay: steady.usdPerDay },
    };
  } finally {
    await flux.stop();
    removeDir(persist);
  }
}

function sumDeltas(deltas) {
  if (deltas.length === 0 || deltas.some((d) => d === null)) return null;
  const sum = { calls: {}, callsTotal: 0, rowsRead: 0, rowsWritten: 0, workerRequests: 0 };
  for (const d of deltas) {
    for (const [m, n] of Object.entries(d.calls)) sum.calls[m] = (sum.calls[m] ?? 0) + n;
    for (const k of ["callsTotal", "rowsRead", "rowsWritten", "workerRequests"]) sum[k] += d[k];
  }
  return sum;
}
