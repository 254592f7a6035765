#!/usr/bin/env node
// `npm run bench [-- --quick | --profile [--partitions N] [--replication R] [--plain] [--cpuprofile <path>] | --report-only | --idle-only | --control-plane-only | --state-bytes-only | --rescale-only | --recovery-only [--keys N[,M...]] [--seed-pacing X] [--after-matrix] [--cpuprofile <dir>] [--before <git ref>]] [--before <git ref>]`: builds the
// real worker bundle (and the bench's two baselines and traced build), runs them in local workerd through the Miniflare API,
// drives them from this process, and writes bench/results/*.json, docs/BENCHMARKS.md and its
// SVG plots. Every ratio compares numbers from this one run.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { counterSelfCost } from "./costs.mjs";
import { api, buildBundle, buildRefBundle, readCounters, removeDir, startFlux, startPlain, tempDir } from "./harness.mjs";
import { idleScenario } from "./idle.mjs";
import { cellMedians, inRounds, lowLoadPlan, matrixCell, matrixPlan, medianRounds } from "./matrix.mjs";
import { join } from "node:path";
import { freePort, profileScenario, startIsolateProfile } from "./profile.mjs";
import { explainStalls, fullRunPrelude, gcTrace } from "./stall-trace.mjs";
import { writeReport } from "./report.mjs";
import { tmpfsCells } from "./tmpfs-cells.mjs";
import { costProfile, countedEvents, failover, rawBaseline, recovery } from "./scenarios.mjs";
import { pipelineScenario } from "./pipeline.mjs";
import { controlPlaneScenario } from "./control-plane.mjs";
import { rescaleScenario } from "./rescale.mjs";

/** Rounds of the 100-event throughput cells in a full run (one in `--quick`): one design's cells varied by up to a fifth within a run. */
const MATRIX_ROUNDS = 3;

/** The value after a command-line flag (undefined without the flag). */
const argAfter = (flag) => (process.argv.includes(flag) ? process.argv[process.argv.indexOf(flag) + 1] : undefined);

/** The recovery scenario per state size; the largest (1M keys in a full run) also times a whole-state checkpoint. */
async function recoveryRuns(url, sizes, sampleMs, log, beforeLargestSeed = undefined) {
  const runs = [];
  for (const keys of sizes) {
    log(`recovery: seed a fresh standby for ${keys} keys`);
    const r = await recovery(url, keys, sampleMs, log, keys >= 1_000_000, keys === Math.max(...sizes) ? beforeLargestSeed : undefined);
    runs.push(r);
    log(`  seeded in ${r.seedMs} ms; ingest meanwhile at ${(r.ratio * 100).toFixed(0)}% of normal; longest stall while seeding ${Math.round(r.longestSeedStallMs)} ms`);
    if (r.checkpoint) log(`  longest stall while checkpointing ${keys} keys: ${Math.round(r.checkpoint.longestStallMs)} ms`);
    log(`  seeded again with no writes arriving: ${r.idleSeedMs ?? "not finished"} ms`);
  }
  return runs;
}

if (process.argv.includes("--report-only")) {
  // Rewrites docs/BENCHMARKS.md and the plots from the last full run's results.
  writeReport(JSON.parse(readFileSync("bench/results/full.json", "utf8")));
  process.exit(0);
}
if (process.argv.includes("--idle-only")) {
  // Reruns the idle-cost scenario alone and rewrites the report with it (the rest from the last full run).
  const results = JSON.parse(readFileSync("bench/results/full.json", "utf8"));
  const tracedPath = buildBundle("bench/trace/wrangler.toml", "trace");
  results.idle = await idleScenario(tracedPath, 120_000, (line) => console.log(line));
  writeFileSync("bench/results/full.json", `${JSON.stringify(results, null, 2)}\n`);
  writeReport(results);
  process.exit(0);
}
/** Bytes per key of each kind of keyed state (issue 30), measured in a Node process of its own (`bench/state-bytes.mjs`). */
function stateBytes(quick) {
  const sizes = quick ? ["--keys", "20000", "--sketch-keys", "2000"] : ["--keys", "1000000", "--sketch-keys", "100000"];
  return JSON.parse(execFileSync(process.execPath, ["bench/state-bytes.mjs", "--json", ...sizes], { encoding: "utf8", maxBuffer: 1 << 20 }));
}

if (process.argv.includes("--state-bytes-only")) {
  // Reruns the state-memory measurement alone and rewrites the report with it (the rest from the last full run).
  const results = JSON.parse(readFileSync("bench/results/full.json", "utf8"));
  results.stateBytes = stateBytes(false);
  writeFileSync("bench/results/full.json", `${JSON.stringify(results, null, 2)}\n`);
  writeReport(results);
  process.exit(0);
}
/** Issue 28's rescale scenario: 4 -> 8 partitions under load. */
async function rescaleRun(scriptPath, quick, log) {
  log("rescale: grow a P=4, R=2 dataflow to P=8 under load (key groups move while ingest goes on)");
  const r = await rescaleScenario(scriptPath, quick ? { beforeMs: 3_000, maxMs: 60_000 } : { beforeMs: 8_000, maxMs: 120_000 }, log);
  log(`  ${r.movesEnded} of ${r.queuedMoves} moves ended in ${Math.round(r.totalMs)} ms (${r.givenUp} given up); ingest meanwhile at ${(r.ratio * 100).toFixed(0)}% of before; longest wait of a group's posts ${r.waits.maxMs} ms; lost ${r.lost}, duplicated ${r.duplicated}`);
  return r;
}

if (process.argv.includes("--rescale-only")) {
  // Reruns the rescale scenario alone and rewrites the report with it (the rest from the last full run).
  const results = JSON.parse(readFileSync("bench/results/full.json", "utf8"));
  results.rescale = await rescaleRun(buildBundle(), false, (line) => console.log(line));
  writeFileSync("bench/results/full.json", `${JSON.stringify(results, null, 2)}\n`);
  writeReport(results);
  process.exit(0);
}

/** The last commit before issue 29: one coordinator for every dataflow's routing and monitor (the control plane's "before"). */
const CONTROL_PLANE_BEFORE = "4629b80";

/** Issue 29's scenario on this traced build and the one before issue 29, in turns, size by size. */
async function controlPlaneRuns(quick, log) {
  let before = null;
  try {
    before = buildRefBundle(CONTROL_PLANE_BEFORE, "bench/trace/wrangler.toml", "trace-before");
  } catch (err) {
    // A shallow clone lacks the commit: this build alone, and the report says so.
    log(`  the build before issue 29 (${CONTROL_PLANE_BEFORE}) could not be made, so this build runs alone: ${String(err).split("\n")[0]}`);
  }
  const builds = [...(before ? [{ label: "before", path: before.path }] : []), { label: "this", path: buildBundle("bench/trace/wrangler.toml", "trace") }];
  const sizes = quick ? [{ dataflows: 5, partitions: 1 }, { dataflows: 20, partitions: 1 }] : [20, 200].flatMap((dataflows) => [1, 4].map((partitions) => ({ dataflows, partitions }))).sort((a, b) => a.partitions - b.partitions);
  const result = await controlPlaneScenario(builds, sizes, quick ? 3_000 : 10_000, log);
  return { ...result, before: before && { ref: CONTROL_PLANE_BEFORE, commit: before.commit } };
}

if (process.argv.includes("--control-plane-only")) {
  // Reruns issue 29's control-plane scenario alone and rewrites the report with it (the rest from the last full run).
  const results = JSON.parse(readFileSync("bench/results/full.json", "utf8"));
  results.controlPlane = await controlPlaneRuns(false, (line) => console.log(line));
  writeFileSync("bench/results/full.json", `${JSON.stringify(results, null, 2)}
`);
  writeReport(results);
  process.exit(0);
}
if (process.argv.includes("--recovery-only")) {
  // Reruns the recovery scenario alone (all three sizes, or `--keys N[,M...]`) and rewrites the report with it.
  // `--before <ref>`: also on the product at that commit, size by size in turns, kept in
  // full.json as `recoverySideBySide` (the report shows both). `--seed-pacing X` sets
  // FLUX_SEED_PACING on this build (then, like `--keys`, only bench/results/recovery.local.json is written).
  const sizes = argAfter("--keys") ? argAfter("--keys").split(",").map(Number) : [10_000, 100_000, 1_000_000];
  const pacing = argAfter("--seed-pacing");
  const before = argAfter("--before");
  const builds = [{ label: "this", path: buildBundle(), vars: pacing === undefined ? {} : { FLUX_SEED_PACING: pacing } }];
  const beforeBuild = before ? buildRefBundle(before) : null;
  if (beforeBuild) builds.unshift({ label: `before ${before}`, path: beforeBuild.path, vars: {} });
  // `--after-matrix`: each build's workerd first holds what a full run's holds by then
  // (`fullRunPrelude`), then seeds all `sizes` in turn. `--cpuprofile <dir>`: profiles the
  // largest size's seed and checkpoint, explains their longest stalls (bench/stall-trace.mjs)
  // and lists every full GC of the workerd.
  const afterMatrix = process.argv.includes("--after-matrix");
  const profileDir = argAfter("--cpuprofile");
  // V8 prints each GC to workerd's output; collected (not printed) for the runs profiled.
  if (profileDir) process.env.MINIFLARE_WORKERD_V8_FLAGS = `${process.env.MINIFLARE_WORKERD_V8_FLAGS ?? ""} --trace-gc`.trim();
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const startedAt = new Date().toISOString();
  const runs = [];
  const runIn = async (build, inOne, tag) => {
    const persist = tempDir("flux-bench-recovery-");
    const port = profileDir ? await freePort() : undefined;
    const gc = profileDir ? gcTrace() : null;
    const flux = await startFlux(build.path, persist, build.vars, { inspectorPort: port, onRuntimeLine: gc?.line });
    const log = (line) => console.log(`[${new Date().toISOString().slice(11, 19)} ${build.label}] ${line}`);
    try {
      if (afterMatrix) await fullRunPrelude(flux, 1_000, log);
      let profiler = null;
      const load = loadavg();
      const rs = await recoveryRuns(flux.url, inOne, 4_000, log, profileDir ? async () => (profiler = await startIsolateProfile(port)) : undefined);
      for (const r of rs) runs.push({ build: build.label, vars: build.vars, loadAverageBefore: load, loadAverageAfter: loadavg(), ...r });
      if (profiler) explainStalls(await profiler.stop(), build.path, rs.at(-1), log, join(profileDir, `${tag}.cpuprofile`));
      if (gc) {
        const majors = gc.majors();
        runs.at(-1).majorGcs = majors;
        const longest = majors.reduce((a, g) => (a && a.pauseMs >= g.pauseMs ? a : g), null);
        log(`  full GCs in this workerd: ${majors.length}${longest ? `, longest ${Math.round(longest.pauseMs)} ms (${longest.beforeMb} -> ${longest.afterMb} MB); largest heap left ${Math.max(...majors.map((g) => g.afterMb))} MB` : ""}`);
      }
    } finally {
      await flux.stop();
      removeDir(persist);
    }
  };
  if (afterMatrix) for (const [i, build] of builds.entries()) await runIn(build, sizes, `recovery-${i}`);
  else for (const keys of sizes) for (const [i, build] of (keys % 2 === 0 ? builds : [...builds].reverse()).entries()) await runIn(build, [keys], `recovery-${keys}-${i}`);
  mkdirSync("bench/results", { recursive: true });
  writeFileSync("bench/results/recovery.local.json", `${JSON.stringify(runs, null, 2)}\n`);
  for (const r of runs) console.log(`${r.build} ${r.keys} keys: seeded in ${r.seedMs} ms, ingest ${(r.ratio * 100).toFixed(0)}%, longest stall ${Math.round(r.longestSeedStallMs)} ms, idle seed ${r.idleSeedMs} ms, load ${r.loadAverageBefore[0].toFixed(2)}`);
  const results = JSON.parse(readFileSync("bench/results/full.json", "utf8"));
  if (beforeBuild && pacing === undefined) {
    // Side by side with an earlier commit: kept next to the full run's recovery table.
    results.recoverySideBySide = { ref: before, commit: beforeBuild.commit, startedAt, finishedAt: new Date().toISOString(), runs };
    writeFileSync("bench/results/full.json", `${JSON.stringify(results, null, 2)}\n`);
    writeReport(results);
    process.exit(0);
  }
  if (argAfter("--keys") || pacing !== undefined || beforeBuild || afterMatrix) process.exit(0);
  results.recovery = runs.map(({ build: _build, vars: _vars, loadAverageBefore: _a, loadAverageAfter: _b, ...r }) => r);
  results.recoveryRerunAt = new Date().toISOString();
  writeFileSync("bench/results/full.json", `${JSON.stringify(results, null, 2)}\n`);
  writeReport(results);
  process.exit(0);
}
const quick = process.argv.includes("--quick");
// `--before <git ref>`: also measures the product as it was at that commit, side by side.
const beforeRef = argAfter("--before") ?? null;
const profileOnly = process.argv.includes("--profile");
const durationMs = quick ? 1_000 : 8_000;
const stateSizes = quick ? [10_000] : [10_000, 100_000, 1_000_000];
const idleMs = quick ? 6_000 : 120_000;
const log = (line) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
const load = () => loadavg().map((n) => n.toFixed(2)).join(", ");

log(`flux bench (${profileOnly ? "profile" : quick ? "quick" : "full"}): building the bundles; load average ${load()}`);
const scriptPath = buildBundle();
if (profileOnly) {
  // `--partitions N` profiles P=N instead of 4, `--replication 1` R=1 instead of R=2; `--cpuprofile <path>` also keeps the raw V8 profile.
  const partitions = Number(argAfter("--partitions") ?? 4);
  if (!Number.isInteger(partitions) || partitions < 1) throw new Error("--partitions takes a whole number of partitions");
  const replication = Number(argAfter("--replication") ?? 2);
  if (replication !== 1 && replication !== 2) throw new Error("--replication takes 1 or 2");
  // `--plain`: the plain baseline's isolate under the same load, to read the product's profile against.
  const plain = process.argv.includes("--plain");
  const profiled = plain ? buildBundle("bench/plain/wrangler.toml", "plain") : scriptPath;
  const profile = await profileScenario(profiled, 10_000, log, { partitions, replication, cpuprofilePath: argAfter("--cpuprofile") ?? null, plain });
  mkdirSync("bench/results", { recursive: true });
  writeFileSync("bench/results/profile.local.json", `${JSON.stringify(profile, null, 2)}\n`);
  log("wrote bench/results/profile.local.json");
  process.exit(0);
}
if (process.argv.includes("--cells")) {
  // `--cells [--partitions N] [--ms N] [--before <ref>]`: only the 100-event throughput cells (and the
  // low-load cell at P=4), the product next to the two baselines and the `--before` build, with counters.
  const only = argAfter("--partitions") === undefined ? null : Number(argAfter("--partitions"));
  const ms = Number(argAfter("--ms") ?? 5_000);
  const cellsBefore = beforeRef ? buildRefBundle(beforeRef) : null;
  const dirs = [tempDir("flux-bench-cells-"), tempDir("flux-bench-cells-plain-"), tempDir("flux-bench-cells-simple-"), tempDir("flux-bench-cells-before-")];
  const instances = {
    flux: await startFlux(scriptPath, dirs[0]),
    plain: await startPlain(buildBundle("bench/plain/wrangler.toml", "plain"), dirs[1]),
    simple: await startPlain(buildBundle("bench/simple/wrangler.toml", "simple"), dirs[2]),
    before: cellsBefore ? await startFlux(cellsBefore.path, dirs[3]) : null,
  };
  const self = {};
  for (const [name, instance] of Object.entries(instances)) self[name] = instance ? await counterSelfCost(() => readCounters(instance.url)) : 0;
  const cells = [...matrixPlan(false, ms, cellsBefore !== null).filter((c) => c.batchSize === 100), ...lowLoadPlan(ms, cellsBefore !== null)];
  const out = { startedAt: new Date().toISOString(), loadAverageBefore: loadavg(), before: cellsBefore && { ref: beforeRef, commit: cellsBefore.commit }, cells: [] };
  try {
    // `--rounds N` runs the cells N times, every other round in reverse order, so that a drift of
    // the machine's speed during the run weighs on every design alike; the summary takes medians.
    const order = inRounds(cells.filter((c) => only === null || c.partitions === only), Number(argAfter("--rounds") ?? 1));
    for (const cell of order) {
      const r = await matrixCell(instances, self, cell);
      out.cells.push(r);
      const cost = r.cost ? `, ${r.cost.per1k.calls.toFixed(1)} calls + ${r.cost.per1k.rowsWritten.toFixed(1)} rows written /1k events, $${r.cost.usdPerMillion.total.toFixed(4)}/M` : "";
      log(`${r.label} P=${r.partitions}${r.concurrency === 1 ? ", one producer" : ""}: ${Math.round(r.eventsPerSecond)} events/s, p50 ${r.p50Ms.toFixed(1)} ms, p99 ${r.p99Ms.toFixed(1)} ms, ${r.cpuMicrosPerEvent.toFixed(1)} µs CPU/event${cost}; load ${load()}`);
    }
  } finally {
    for (const instance of Object.values(instances)) await instance?.stop();
    dirs.forEach(removeDir);
  }
  out.medians = cellMedians(out.cells);
  for (const m of out.medians) log(`median of ${m.runs}: ${m.label} P=${m.partitions}${m.concurrency === 1 ? ", one producer" : ""}: ${Math.round(m.eventsPerSecond)} events/s, p50 ${m.p50Ms.toFixed(1)} ms, ${m.cpuMicrosPerEvent.toFixed(1)} µs CPU/event`);
  mkdirSync("bench/results", { recursive: true });
  writeFileSync("bench/results/cells.local.json", `${JSON.stringify(out, null, 2)}\n`);
  log("wrote bench/results/cells.local.json");
  process.exit(0);
}
const plainPath = buildBundle("bench/plain/wrangler.toml", "plain");
const simplePath = buildBundle("bench/simple/wrangler.toml", "simple");
const tracedPath = buildBundle("bench/trace/wrangler.toml", "trace");
const beforeBuild = beforeRef ? buildRefBundle(beforeRef) : null;
const persist = tempDir("flux-bench-state-");
const plainPersist = tempDir("flux-bench-plain-");
const simplePersist = tempDir("flux-bench-simple-");
const beforePersist = tempDir("flux-bench-before-");
let flux = await startFlux(scriptPath, persist);
const plain = await startPlain(plainPath, plainPersist);
const simple = await startPlain(simplePath, simplePersist);
const beforeFlux = beforeBuild ? await startFlux(beforeBuild.path, beforePersist) : null;
const results = { quick, startedAt: new Date().toISOString(), loadAverageBefore: loadavg(), before: beforeBuild && { ref: beforeRef, commit: beforeBuild.commit } };
try {
  log("raw baseline: parse + route + aggregate in one Node process");
  results.raw = rawBaseline(quick ? 2_000 : 8_000);
  log(`  ${Math.round(results.raw.eventsPerSecond)} events/s`);

  const instances = { flux, plain, simple, before: beforeFlux };
  const selfRequests = {
    flux: await counterSelfCost(() => readCounters(flux.url)),
    plain: await counterSelfCost(() => readCounters(plain.url)),
    simple: await counterSelfCost(() => readCounters(simple.url)),
    before: beforeFlux ? await counterSelfCost(() => readCounters(beforeFlux.url)) : 0,
  };
  results.countersAvailable = (await readCounters(flux.url)) !== null;
  if (!results.countersAvailable) log("  Flux counters unavailable (no GET /v1/admin/counters in this build): calls, rows and $ are not reported for Flux");
  const measure = async (cells) => {
    const out = [];
    for (const cell of cells) {
      const r = await matrixCell(instances, selfRequests, cell);
      out.push(r);
      const cost = r.cost ? `, ${r.cost.per1k.calls.toFixed(0)} calls + ${r.cost.per1k.rowsWritten.toFixed(0)} rows written /1k events, $${r.cost.usdPerMillion.total.toFixed(4)}/M` : ", counters unavailable";
      log(`${r.label} P=${r.partitions} batch ${r.batchSize}${r.concurrency === 1 ? ", one producer" : ""}: ${Math.round(r.eventsPerSecond)} events/s, p50 ${r.p50Ms.toFixed(1)} ms, p99 ${r.p99Ms.toFixed(1)} ms, ${r.cpuMicrosPerEvent.toFixed(1)} µs CPU/event${cost}`);
    }
    return out;
  };
  // The 100-event cells (every ratio the issue's targets name) in rounds, each design's median round kept;
  // the other batch sizes once.
  const plan = matrixPlan(quick, durationMs, beforeFlux !== null);
  results.matrixRounds = await measure(inRounds(plan.filter((c) => c.batchSize === 100), quick ? 1 : MATRIX_ROUNDS));
  results.matrix = [...medianRounds(results.matrixRounds), ...(await measure(plan.filter((c) => c.batchSize !== 100)))];
  results.lowLoad = await measure(lowLoadPlan(quick ? durationMs : 6_000, beforeFlux !== null));
  await plain.stop();
  await simple.stop();
  await beforeFlux?.stop();

  log("cost profile: CPU per batch against batch size, P=1");
  results.cost = await costProfile(flux.url, quick ? 1_000 : 3_000, flux.pid);
  for (const f of results.cost.fits) log(`  R=${f.replication}: ${Math.round(f.fixedMicrosPerBatch)} µs per batch + ${f.marginalMicrosPerEvent.toFixed(2)} µs per event`);

  log("fail-over: crash the primary of partition 0 under load");
  results.failover = await failover(flux.url, quick ? 6_000 : 12_000, quick ? 2_000 : 4_000);
  log(`  unavailable ${Math.round(results.failover.unavailabilityMs)} ms; lost ${results.failover.lost}, duplicated ${results.failover.duplicated}`);

  log("pipeline: two stages (P=4 -> P=4, R=2) against the first alone, the delay to the last stage, an upstream crash");
  const pipelineRuns = quick ? { durationMs: 1_500, rounds: 1, latencyMs: 6_000, crashMs: 8_000 } : { durationMs: 8_000, rounds: 3, latencyMs: 15_000, crashMs: 15_000 };
  results.pipeline = await pipelineScenario(scriptPath, pipelineRuns, log);

  results.rescale = await rescaleRun(scriptPath, quick, log);

  log(`control plane: ${quick ? "5 and 20 dataflows (P=1" : "20 and 200 dataflows (P=1 and P=4"}, R=2), this build and the one before issue 29 (traced builds)`);
  results.controlPlane = await controlPlaneRuns(quick, log);

  results.recovery = await recoveryRuns(flux.url, stateSizes, quick ? 2_000 : 4_000, log);

  log("state memory: bytes per key of each kind of keyed state (bench/state-bytes.mjs)");
  results.stateBytes = stateBytes(quick);
  for (const r of results.stateBytes.rows) log(`  ${r.kind}: ${r.bytesPerKey.toFixed(1)} B per key over ${r.keys} keys`);

  log("restart: stop workerd, start it again on the same storage");
  const before = await countedEvents(flux.url, "failover");
  await flux.stop();
  const restartedAt = performance.now();
  flux = await startFlux(scriptPath, persist);
  let firstAckMs = null;
  for (let seq = 1; firstAckMs === null && performance.now() - restartedAt < 60_000; seq++) {
    const res = await api(flux.url, "POST", "/v1/streams/failover/events", [{ page: "after-restart", ts: 1_000, bytes: 1 }], { "flux-producer-id": "restart", "flux-seq": String(seq) });
    if (res.status === 200) firstAckMs = performance.now() - restartedAt;
  }
  const after = await countedEvents(flux.url, "failover");
  results.restart = { firstAckMs, countedBefore: before, countedAfter: after - 1, unchanged: after - 1 === before };
  log(`  first acknowledged batch ${Math.round(firstAckMs ?? -1)} ms after start; results unchanged: ${results.restart.unchanged}`);
  await flux.stop();

  log(`idle cost: one P=4, R=2 dataflow alone, idle for ${idleMs / 1000} s (traced build)`);
  results.idle = await idleScenario(tracedPath, idleMs, log);
  const s = results.idle.steady;
  log(`  steady window scaled to an hour: ${Math.round(s.perHour.calls)} calls, ${Math.round(s.perHour.rowsWritten)} rows written, ${Math.round(s.perHour.objectSeconds)} object-seconds`);
  const q = results.idle.quietDay;
  log(q ? `  quiet day (${q.roundsPerDay} idle rounds at the measured cost per round): $${q.usdPerDay.total.toFixed(4)}` : "  quiet day not priced: no idle probe round in the window (the monitor had not backed off yet)");

  if (!quick) {
    log("the P=4 cells again, with the state on tmpfs (what the disk adds to each commit)");
    results.tmpfs = await tmpfsCells(scriptPath, plainPath, simplePath, durationMs, MATRIX_ROUNDS, log);
    log("profile: V8 CPU profile of a steady P=4, R=2 run");
    results.profile = await profileScenario(scriptPath, 10_000, log);
    log("profile: the plain baseline's isolate under the same load");
    results.plainProfile = await profileScenario(plainPath, 10_000, log, { plain: true });
    log("profile: the same at P=16, R=2 (where the P16/P1 target is missed)");
    results.profileP16 = await profileScenario(scriptPath, 10_000, log, { partitions: 16 });
  }
} finally {
  await flux.stop();
  await plain.stop();
  await simple.stop();
  await beforeFlux?.stop();
  removeDir(persist);
  removeDir(plainPersist);
  removeDir(simplePersist);
  removeDir(beforePersist);
}
results.loadAverageAfter = loadavg();
results.finishedAt = new Date().toISOString();
mkdirSync("bench/results", { recursive: true });
// Quick runs are smoke tests (CI): their results stay out of the repository.
const file = quick ? "bench/results/quick.local.json" : "bench/results/full.json";
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
if (!quick) writeReport(results);
log(`wrote ${file}${quick ? "" : ", docs/BENCHMARKS.md and docs/bench-*.svg"}; load average ${load()}`);
