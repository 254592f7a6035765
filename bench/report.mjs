// Turns one benchmark run into docs/BENCHMARKS.md plus SVG plots.
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { lineChart } from "./svg.mjs";

const fmt = (n, digits = 0) => (Number.isFinite(n) ? n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits }) : "n/a");
const pct = (r) => `${(r * 100).toFixed(0)}%`;

function machine() {
  const workerd = JSON.parse(readFileSync("node_modules/miniflare/package.json", "utf8")).dependencies?.workerd ?? "?";
  return `${cpus().length} × ${cpus()[0]?.model ?? "?"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, workerd ${workerd} (through Miniflare)`;
}

export function writeReport(results, targets) {
  const tp = (p, r) => results.throughput.find((t) => t.partitions === p && t.replication === r);
  const rows = results.throughput.map(
    (t) => `| ${t.partitions} | ${t.replication} | ${fmt(t.eventsPerSecond)} | ${fmt(t.p50Ms, 1)} | ${fmt(t.p99Ms, 1)} | ${fmt(t.cpuMicrosPerEvent, 1)} | ${fmt(t.eventsPerSecond / results.raw.eventsPerSecond, 3)} |`,
  );
  const ratios = [1, 4, 16].map((p) => {
    const r1 = tp(p, 1);
    const r2 = tp(p, 2);
    return `| ${p} | ${fmt(r2.eventsPerSecond / r1.eventsPerSecond, 2)} | ${fmt(r2.p50Ms / r1.p50Ms, 2)} | ${fmt(r2.p99Ms / r1.p99Ms, 2)} | ${fmt(r2.cpuMicrosPerEvent / r1.cpuMicrosPerEvent, 2)} |`;
  });
  const f = results.failover;
  const recRows = results.recovery.map((r) => `| ${fmt(r.keys)} | ${fmt(r.seedMs)} | ${fmt(r.baselineEventsPerSecond)} | ${fmt(r.duringEventsPerSecond)} | ${pct(r.ratio)} |`);

  writeFileSync(
    "docs/bench-failover.svg",
    lineChart({
      title: "Ingest around a primary crash (partition 0 of 4)",
      xLabel: "time since start (s)",
      yLabel: "acknowledged events/s",
      series: [
        { name: "partition 0", points: f.series.map((s) => [s.tMs / 1000, s.partition0]) },
        { name: "partitions 1-3", points: f.series.map((s) => [s.tMs / 1000, s.others]) },
      ],
    }),
  );
  writeFileSync(
    "docs/bench-recovery.svg",
    lineChart({
      title: "Seeding a fresh standby against state size",
      xLabel: "keys in the partition (log scale)",
      yLabel: "seeding time (ms)",
      logX: true,
      series: [{ name: "seeding time", points: results.recovery.map((r) => [r.keys, r.seedMs]) }],
    }),
  );

  const md = `# Benchmarks

Measured by \`npm run bench\` on ${results.startedAt.slice(0, 10)}: the real worker bundle
(\`wrangler deploy --dry-run\`) in local workerd through the Miniflare API, state on local
disk (SQLite), load from a separate process (this Node process; workerd runs in its own).
Every ratio below compares numbers from this one run, since the machine is shared and
noisy. Raw results: [\`bench/results/full.json\`](../bench/results/full.json).

Machine: ${machine()}.

Load: ${results.throughput.length ? "8" : "?"} producers, each posting 100-event JSON batches back to back over 10,000
keys (closed loop: a producer waits for its acknowledgement), resending on 503.

## Throughput and latency

| P | R | events/s | p50 ms | p99 ms | workerd CPU µs/event | of raw |
| --- | --- | --- | --- | --- | --- | --- |
${rows.join("\n")}

Raw baseline (the same batches parsed, routed and aggregated with the same code in one
Node process): **${fmt(results.raw.eventsPerSecond)} events/s**, ${fmt(results.raw.cpuMicrosPerEvent, 2)} µs CPU/event.

R=2 against R=1, same P:

| P | throughput R2/R1 | p50 R2/R1 | p99 R2/R1 | CPU/event R2/R1 |
| --- | --- | --- | --- | --- |
${ratios.join("\n")}

## Fail-over

Under steady load on 4 partitions, the primary of partition 0 was crashed
${fmt(f.crashAtMs / 1000, 1)} s into the run (default settings: heartbeat 500 ms, 2 missed probes).

| unavailability of partition 0 | others before (events/s) | others after | 503s seen | acknowledged events | counted | lost | duplicated |
| --- | --- | --- | --- | --- | --- | --- | --- |
| ${fmt(f.unavailabilityMs)} ms | ${fmt(f.othersEventsPerSecondBefore)} | ${fmt(f.othersEventsPerSecondAfter)} | ${fmt(f.rejected)} | ${fmt(f.acked)} | ${fmt(f.counted)} | ${f.lost} | ${f.duplicated} |

![throughput around fail-over](bench-failover.svg)

Monitor events: ${f.events.map((e) => `\`${e}\``).join("; ")}.

## Recovery

One partition holding N keys loses its standby; a fresh one is seeded from the primary's
snapshot and log while ingest continues (4 producers, 100-event batches).

| keys | seeding time ms | ingest before (events/s) | during seeding | during / before |
| --- | --- | --- | --- | --- |
${recRows.join("\n")}

![seeding time against state size](bench-recovery.svg)

## Restart

workerd stopped and started again on the same storage (every object restarts, as in a
deploy): first acknowledged batch **${fmt(results.restart.firstAckMs)} ms** after start;
results ${results.restart.unchanged ? "unchanged" : "CHANGED"} (${fmt(results.restart.countedBefore)} events before and after).

## Targets

${targets ?? "(see the analysis below)"}
`;
  writeFileSync("docs/BENCHMARKS.md", md);
}
