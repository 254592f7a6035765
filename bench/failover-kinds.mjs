#!/usr/bin/env node
// `npm run bench:failover [-- --kinds=crash,hang,slow --repeat=3]`: only the fail-over
// scenario, once per fault kind and repetition, each on a fresh dataflow in one workerd with
// the default settings; prints and writes bench/results/failover-kinds.json with min and
// median unavailability per kind (the machine is shared and noisy: repeat, compare medians),
// and docs/FAILOVER.md from them.
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
const measuredAt = new Date().toISOString();
writeFileSync("bench/results/failover-kinds.json", `${JSON.stringify({ measuredAt, summary, runs }, null, 2)}\n`);
const loads = runs.map((r) => r.loadAverage);
writeFileSync(
  "docs/FAILOVER.md",
  `# Fail-over per fault kind

Written by \`npm run bench:failover\` (${measuredAt}): the fail-over scenario of
[BENCHMARKS.md](BENCHMARKS.md#fail-over) (4 partitions, R=2, 8 producers of 100-event
batches, default settings) once per fault kind and repetition, each on a fresh dataflow in
one local workerd. The fault is injected into the primary of partition 0 after 2 s;
*unavailability* is the longest time partition 0 acknowledged nothing from the moment the
injection request was sent (so it includes that request's own latency); *takeover* is when
the monitor's tick that replaced the primary began. \`crash\`: every call fails at once;
\`hang\`: calls never answer; \`slow\`: every call takes 2 s. The machine's load average
during the runs was ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} (two cores, shared): compare medians.

| fault | runs | min ms | median ms | max ms | target |
| --- | --- | --- | --- | --- | --- |
${summary.map((s) => `| ${s.kind} | ${s.runs} | ${s.minMs} | ${s.medianMs} | ${s.maxMs} | ${s.maxMs <= 1500 ? "every run ≤ 1.5 s: met" : s.medianMs <= 1500 ? `median ≤ 1.5 s, but ${s.maxMs} ms at worst: **missed** in some runs` : "median ≤ 1.5 s: **missed**"} |`).join("\n")}

| fault | run | unavailable ms | takeover after ms | 503s seen | lost | duplicated |
| --- | --- | --- | --- | --- | --- | --- |
${runs.map((r) => `| ${r.kind} | ${r.run} | ${Math.round(r.unavailabilityMs)} | ${r.takeoverMs ?? "none"} | ${r.rejected} | ${r.lost} | ${r.duplicated} |`).join("\n")}
`,
);
