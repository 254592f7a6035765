#!/usr/bin/env node
// `npm run bench:failover [-- --kinds=crash,hang,slow --repeat=3]`: only the fail-over
// scenario, once per fault kind and repetition, each on a fresh dataflow in one workerd with
// the default settings; prints and writes bench/results/failover-kinds.json with min and
// median unavailability per kind (the machine is shared and noisy: repeat, compare medians).
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { buildBundle, removeDir, startFlux, tempDir } from "./harness.mjs";
import { failover } from "./scenarios.mjs";

const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? fallback;
const kinds = arg("kinds", "crash,hang,slow").split(",");
const repeat = Number(arg("repeat", "3"));
const log = (line) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);

const scriptPath = buildBundle();
const persist = tempDir("flux-bench-failover-");
const flux = await startFlux(scriptPath, persist);
const runs = [];
try {
  for (let n = 1; n <= repeat; n++) {
    for (const kind of kinds) {
      if (process.env.FAILOVER_VERBOSE) log(`${kind} #${n}: starting`);
      const r = await failover(flux.url, 6_000, 2_000, kind, `failover-${kind}-${n}`);
      runs.push({ kind, run: n, unavailabilityMs: r.unavailabilityMs, firstAcksAfterFaultMs: r.firstAcksAfterFaultMs, rejected: r.rejected, lost: r.lost, duplicated: r.duplicated, loadAverage: loadavg()[0], events: r.events });
      const takeover = r.events.find((e) => e.includes("takeover"));
      const takeoverMs = takeover ? Date.parse(takeover.split(" ")[0]) - r.faultAtEpochMs : null;
      runs[runs.length - 1].takeoverMs = takeoverMs;
      log(`${kind} #${n}: takeover ${takeoverMs} ms after the fault, unavailable ${Math.round(r.unavailabilityMs)} ms, ${r.rejected} 503s, lost ${r.lost}, duplicated ${r.duplicated}, load ${loadavg()[0].toFixed(2)}`);
    }
  }
} finally {
  await (flux.stop ? flux.stop() : flux.mf.dispose());
  removeDir(persist);
}
const summary = kinds.map((kind) => {
  const gaps = runs.filter((r) => r.kind === kind).map((r) => r.unavailabilityMs).sort((a, b) => a - b);
  return { kind, runs: gaps.length, minMs: Math.round(gaps[0]), medianMs: Math.round(gaps[Math.floor(gaps.length / 2)]), maxMs: Math.round(gaps[gaps.length - 1]) };
});
for (const s of summary) log(`${s.kind}: min ${s.minMs} ms, median ${s.medianMs} ms, max ${s.maxMs} ms over ${s.runs} runs`);
mkdirSync("bench/results", { recursive: true });
writeFileSync("bench/results/failover-kinds.json", `${JSON.stringify({ measuredAt: new Date().toISOString(), summary, runs }, null, 2)}\n`);
