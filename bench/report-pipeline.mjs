// docs/BENCHMARKS.md's pipeline section (issue 27): a two-stage pipeline against its first
// stage alone, the delay to the last stage's closed result, and an upstream crash.
import { fmt } from "./report-cost.mjs";

const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.floor((sorted.length - 1) / 2)];
};

/** Per round, the pipeline's figure over the first stage's alone; then the median of those. */
function ratios(cells) {
  const rounds = [...new Set(cells.map((c) => c.round))];
  const per = rounds.map((round) => {
    const one = cells.find((c) => c.round === round && c.label === "first stage alone");
    const two = cells.find((c) => c.round === round && c.label === "two stages");
    return {
      throughput: two.eventsPerSecond / one.eventsPerSecond,
      calls: two.cost.per1k.calls / one.cost.per1k.calls,
      rows: two.cost.per1k.rowsWritten / one.cost.per1k.rowsWritten,
      usd: two.cost.usdPerMillion.total / one.cost.usdPerMillion.total,
    };
  });
  const of = (field) => ({ median: median(per.map((r) => r[field])), all: per.map((r) => r[field]) });
  return { throughput: of("throughput"), calls: of("calls"), rows: of("rows"), usd: of("usd") };
}

/** The section, or a line saying the run had no pipeline scenario (results of an older run). */
export function pipelineSection(results) {
  const p = results.pipeline;
  if (!p) return "## Pipelines (issue 27)\n\nNot measured in this run.\n";
  const r = ratios(p.cells);
  const rows = p.cells.map(
    (c) =>
      `| ${c.round + 1} | ${c.label} | ${fmt(c.eventsPerSecond)} | ${fmt(c.p50Ms, 1)} | ${fmt(c.cost.per1k.calls, 1)} | ${fmt(c.cost.per1k.rowsWritten, 1)} | ${fmt(c.cost.per1k.byMethod.deliver ?? 0, 2)} | $${c.cost.usdPerMillion.total.toFixed(4)} | ${fmt(c.cpuMicrosPerEvent, 1)} |`,
  );
  const list = (o) => o.all.map((x) => fmt(x, 2)).join(", ");
  const l = p.latency;
  const c = p.crash;
  const row = (target, measured, met) => `| ${target} | ${measured} | ${met ? "met" : "**missed**"} |`;
  return `## Pipelines (issue 27)

A two-stage pipeline against its first stage alone, in one workerd, in ${new Set(p.cells.map((x) => x.round)).size} alternating rounds
(each cell on fresh dataflows, deleted after it). Load: 8 producers posting 100-event
batches back to back, events timed when sent, over 1,000 pages of 16 sites. Stage 1
(P=4, R=2) counts views and bytes per page per second (1 s tumbling windows, 100 ms
allowed lateness, \`idleAdvanceMs\` 0); stage 2 (P=4, R=2) reads its results and sums
them per site (\`key: "group.site"\`) per second: the per host, then per subnet shape
of [PIPELINES.md](PIPELINES.md). Calls and rows are counted by the workerd isolate
(every object of both stages), per 1,000 acknowledged events.

| round | design | events/s | p50 ms | calls /1k events | rows written /1k | of which deliveries /1k | $ per M events | CPU µs/event |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
${rows.join("\n")}

Two stages over one, per round (median first): throughput **${fmt(r.throughput.median, 2)}** (${list(r.throughput)}),
calls **${fmt(r.calls.median, 2)}×** (${list(r.calls)}), rows written **${fmt(r.rows.median, 2)}×** (${list(r.rows)}),
dollars **${fmt(r.usd.median, 2)}×** (${list(r.usd)}).

**Delay to the last stage.** Two producers keep a steady load on the same pipeline; for
each second-long window, its close is its end plus the 100 ms allowed lateness, the moment
stage 1's clock can pass it. The time from there until stage 2 shows its result as closed,
read through the results API every 10 ms, one site per stage partition: p50 **${fmt(l.p50Ms)} ms**,
p99 **${fmt(l.p99Ms)} ms**, max ${fmt(l.maxMs)} ms over ${fmt(l.results)} results of ${fmt(l.windows)} windows.
From a post to that result add the rest of its window (up to 1 s here).

**An upstream crash.** Under the throughput load, stage 1's primary of partition 0 was
crashed a third into a ${fmt(c.acked)}-event run (stage 1 with 5 s allowed lateness, so no
resent event is late; stage 2 with 2 s windows): acknowledgements paused at most
**${fmt(c.ingestGapMs)} ms**; stage 2's longest time between window closes was ${fmt(c.stageLongestGapMs)} ms,
${fmt(c.stageStallMs)} ms beyond its 2 s windows; its results per site and window against every
acknowledged event: **${c.lost} lost, ${c.duplicated} duplicated**${c.allClosed ? "" : " (not every window had closed when compared)"}.
Monitor events: ${c.events.map((e) => `\`${e}\``).join("; ")}.

| target (issue 27) | measured | |
| --- | --- | --- |
${row("throughput of the pipeline ≥ 0.8× its first stage alone", `${fmt(r.throughput.median, 2)} (median of rounds)`, r.throughput.median >= 0.8)}
${row("calls, rows written and $ per event ≤ 1.5× the first stage alone", `${fmt(r.calls.median, 2)}×, ${fmt(r.rows.median, 2)}×, ${fmt(r.usd.median, 2)}×`, Math.max(r.calls.median, r.rows.median, r.usd.median) <= 1.5)}
${row("last stage's closed result within 200 ms of the window's close (p50, p99)", `${fmt(l.p50Ms)} ms, ${fmt(l.p99Ms)} ms`, l.p99Ms <= 200)}
${row("an upstream primary crash: the last stage's results exact", `${c.lost} lost, ${c.duplicated} duplicated`, c.lost === 0 && c.duplicated === 0 && c.allClosed)}
`;
}
