#!/usr/bin/env node
// `npm run bench [-- --quick]`: builds the real worker bundle, runs it in local workerd
// through the Miniflare API, drives it from this process, and writes bench/results/*.json,
// docs/BENCHMARKS.md and its SVG plots. Every ratio compares numbers from this one run.
import { mkdirSync, writeFileSync } from "node:fs";
import { api, buildBundle, removeDir, startFlux, tempDir } from "./harness.mjs";
import { writeReport } from "./report.mjs";
import { costProfile, countedEvents, failover, rawBaseline, recovery, throughput } from "./scenarios.mjs";

const quick = process.argv.includes("--quick");
const durationMs = quick ? 2_000 : 8_000;
const stateSizes = quick ? [10_000] : [10_000, 100_000, 1_000_000];
const log = (line) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);

log(`flux bench (${quick ? "quick" : "full"}): building the worker bundle`);
const scriptPath = buildBundle();
const persist = tempDir("flux-bench-state-");
let flux = await startFlux(scriptPath, persist);
const results = { quick, startedAt: new Date().toISOString() };
try {
  log("raw baseline: parse + route + aggregate in one Node process");
  results.raw = rawBaseline(durationMs);
  log(`  ${Math.round(results.raw.eventsPerSecond)} events/s`);

  results.throughput = [];
  for (const partitions of [1, 4, 16]) {
    for (const replication of [1, 2]) {
      log(`throughput P=${partitions} R=${replication} for ${durationMs / 1000} s`);
      const r = await throughput(flux.url, partitions, replication, durationMs);
      results.throughput.push(r);
      log(`  ${Math.round(r.eventsPerSecond)} events/s, p50 ${r.p50Ms.toFixed(1)} ms, p99 ${r.p99Ms.toFixed(1)} ms, ${r.cpuMicrosPerEvent.toFixed(1)} µs CPU/event`);
    }
  }

  log("cost profile: CPU per batch against batch size, P=1");
  results.cost = await costProfile(flux.url, quick ? 1_000 : 3_000);
  for (const f of results.cost.fits) log(`  R=${f.replication}: ${Math.round(f.fixedMicrosPerBatch)} µs per batch + ${f.marginalMicrosPerEvent.toFixed(2)} µs per event`);

  log("fail-over: crash the primary of partition 0 under load");
  results.failover = await failover(flux.url, quick ? 6_000 : 12_000, quick ? 2_000 : 4_000);
  log(`  unavailable ${Math.round(results.failover.unavailabilityMs)} ms; lost ${results.failover.lost}, duplicated ${results.failover.duplicated}`);

  results.recovery = [];
  for (const keys of stateSizes) {
    log(`recovery: seed a fresh standby for ${keys} keys`);
    const r = await recovery(flux.url, keys, quick ? 2_000 : 4_000, log);
    results.recovery.push(r);
    log(`  seeded in ${r.seedMs} ms; ingest meanwhile at ${(r.ratio * 100).toFixed(0)}% of normal`);
  }

  log("restart: stop workerd, start it again on the same storage");
  const before = await countedEvents(flux.url, "tp-p4-r2");
  await flux.mf.dispose();
  const restartedAt = performance.now();
  flux = await startFlux(scriptPath, persist);
  let firstAckMs = null;
  for (let seq = 1; firstAckMs === null && performance.now() - restartedAt < 60_000; seq++) {
    const res = await api(flux.url, "POST", "/v1/streams/tp-p4-r2/events", [{ page: "after-restart", ts: 1_000, bytes: 1 }], { "flux-producer-id": "restart", "flux-seq": String(seq) });
    if (res.status === 200) firstAckMs = performance.now() - restartedAt;
  }
  const after = await countedEvents(flux.url, "tp-p4-r2");
  results.restart = { firstAckMs, countedBefore: before, countedAfter: after - 1, unchanged: after - 1 === before };
  log(`  first acknowledged batch ${Math.round(firstAckMs ?? -1)} ms after start; results unchanged: ${results.restart.unchanged}`);
} finally {
  await flux.mf.dispose();
  removeDir(persist);
}
results.finishedAt = new Date().toISOString();
mkdirSync("bench/results", { recursive: true });
// Quick runs are smoke tests (CI): their results stay out of the repository.
const file = quick ? "bench/results/quick.local.json" : "bench/results/full.json";
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
if (!quick) writeReport(results);
log(`wrote ${file}${quick ? "" : ", docs/BENCHMARKS.md and docs/bench-*.svg"}`);

