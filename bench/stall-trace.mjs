// What held workerd's one thread during a stall (issue 12, deliverable 4): a V8 CPU profile of
// the product's isolate over a scenario, and, for a window of it (the longest probe of
// bench/stalls.mjs), the self time of the samples inside it by function and by the
// outermost product frame of their stacks. V8 stamps samples with the monotonic clock
// (µs), as Node's `process.hrtime` does, so a probe's `performance.now()` maps onto them.
import { readFileSync, writeFileSync } from "node:fs";
import { counterSelfCost } from "./costs.mjs";
import { readCounters } from "./harness.mjs";
import { matrixCell, matrixPlan } from "./matrix.mjs";
import { moduleMap } from "./profile.mjs";
import { costProfile, failover } from "./scenarios.mjs";

/** The monotonic clock in µs, as the V8 profiler stamps samples. */
const monoUs = () => Number(process.hrtime.bigint() / 1000n);
/** µs on the monotonic clock of a `performance.now()` reading (ms). */
const toMonoUs = (ms) => monoUs() - performance.now() * 1000 + ms * 1000;


/**
 * The samples of `profile` stamped inside [fromUs, toUs] (monotonic µs): busy and idle ms,
 * and the heaviest self-time functions and outermost product frames.
 */
function explainWindow(profile, scriptPath, fromUs, toUs, top = 12) {
  const lines = readFileSync(scriptPath, "utf8").split("\n");
  const moduleOf = moduleMap(lines);
  const bundle = scriptPath.split("/").at(-1);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const name = (n) => {
    const { functionName, url, lineNumber } = n.callFrame;
    return `${functionName || "(anonymous)"}${url.includes(bundle) ? ` ${moduleOf(lineNumber)}:${lineNumber + 1}` : ""}`;
  };
  const self = new Map();
  const outer = new Map();
  let busyUs = 0;
  let idleUs = 0;
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    t += profile.timeDeltas[i];
    const us = profile.timeDeltas[i + 1] ?? 0;
    if (t < fromUs || t > toUs) return;
    const node = byId.get(id);
    if (node.callFrame.functionName === "(idle)") {
      idleUs += us;
      return;
    }
    busyUs += us;
    self.set(name(node), (self.get(name(node)) ?? 0) + us);
    const stack = [];
    for (let n = node; n; n = byId.get(parent.get(n.id))) stack.unshift(n);
    const product = stack.filter((n) => n.callFrame.url.includes(bundle) && !moduleOf(n.callFrame.lineNumber).startsWith("node_modules/"));
    // The two outermost product frames: the entry and what it called.
    const key = product.length === 0 ? name(node) : product.slice(0, 2).map(name).join(" > ");
    outer.set(key, (outer.get(key) ?? 0) + us);
  });
  const rows = (m) => [...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([what, us]) => ({ what, ms: Math.round(us / 100) / 10 }));
  return { fromUs, toUs, windowMs: (toUs - fromUs) / 1000, busyMs: busyUs / 1000, idleMs: idleUs / 1000, self: rows(self), outer: rows(outer) };
}

/** Logs a window's explanation. */
function reportWindow(profile, scriptPath, label, window, log) {
  const w = explainWindow(profile, scriptPath, window.fromUs, window.toUs);
  log(`  ${label}: ${w.windowMs.toFixed(0)} ms window, ${w.busyMs.toFixed(0)} ms busy, ${w.idleMs.toFixed(0)} ms idle`);
  for (const r of w.self) log(`    self ${r.ms} ms ${r.what}`);
  for (const r of w.outer) log(`    under ${r.ms} ms ${r.what}`);
  return w;
}

/**
 * The state a full run's workerd holds when its recovery scenario starts: every Flux cell of
 * the throughput matrix (created, loaded, deleted), the cost profile's two dataflows and the
 * fail-over scenario's, each shorter than in the full run (`cellMs`).
 */
export async function fullRunPrelude(flux, cellMs, log) {
  const self = { flux: await counterSelfCost(() => readCounters(flux.url)) };
  for (const cell of matrixPlan(false, cellMs, false).filter((c) => c.modeSpec.mode === "flux")) {
    const r = await matrixCell({ flux }, self, cell);
    log(`prelude: ${r.label} P=${r.partitions} batch ${r.batchSize}: ${Math.round(r.eventsPerSecond)} events/s`);
  }
  await costProfile(flux.url, cellMs, flux.pid);
  const f = await failover(flux.url, 3 * cellMs, cellMs);
  log(`prelude: cost profile, then fail-over (unavailable ${Math.round(f.unavailabilityMs)} ms)`);
}

/** Explains a recovery run's longest stalls (seeding, checkpoint) from a profile over both; writes the profile to `path`. */
export function explainStalls(profile, scriptPath, run, log, path) {
  writeFileSync(path, JSON.stringify(profile));
  log(`  wrote ${path}`);
  const windowOf = (atMs, ms) => ({ fromUs: toMonoUs(atMs), toUs: toMonoUs(atMs + ms) });
  if (run.longestSeedStallAtMs !== null) reportWindow(profile, scriptPath, `longest stall while seeding (${Math.round(run.longestSeedStallMs)} ms)`, windowOf(run.longestSeedStallAtMs, run.longestSeedStallMs), log);
  const cp = run.checkpoint;
  if (cp?.longestStallAtMs != null) reportWindow(profile, scriptPath, `longest stall while checkpointing (${Math.round(cp.longestStallMs)} ms)`, windowOf(cp.longestStallAtMs, cp.longestStallMs), log);
}

/**
 * V8's `--trace-gc` lines of a workerd (MINIFLARE_WORKERD_V8_FLAGS), collected: `line(text)`
 * for `onRuntimeLine`; `majors()` gives each full GC (workerd runs V8 with incremental
 * marking off, so each is one pause of the whole isolate) as `{ pauseMs, beforeMb, afterMb }`.
 */
export function gcTrace() {
  const majors = [];
  return {
    line(text) {
      const m = /Mark-Compact[^\d]*([\d.]+) \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \//.exec(text);
      if (m) majors.push({ beforeMb: Number(m[1]), afterMb: Number(m[2]), pauseMs: Number(m[3]) });
    },
    majors: () => majors.slice(),
  };
}
