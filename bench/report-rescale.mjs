// docs/BENCHMARKS.md's rescale section (issue 28): a P=4 dataflow grown to P=8 under load.
import { fmt } from "./report-cost.mjs";

/** The section, or a line saying the run had no rescale scenario (results of an older run). */
export function rescaleSection(results) {
  const r = results.rescale;
  if (!r) return "## Rescaling (issue 28)\n\nNot measured in this run.\n";
  const row = (target, measured, met) => `| ${target} | ${measured} | ${met ? "met" : "**missed**"} |`;
  return `## Rescaling (issue 28)

A window-aggregate dataflow on ${r.from} partitions (R=2, ${fmt(r.keys)} keys, one window that
stays open) under a closed-loop load (8 producers, 100-event batches) was sent its spec
again with \`partitions: ${r.to}\`. Its monitor created the new pairs and queued
${r.queuedMoves} moves of at most 4 key groups each; they ran ${r.finished ? "to the end" : "**but had not all ended**"} while the load went on. Both
phases read \`/v1/status\` every 500 ms (the second to see the moves end). Local workerd runs
every object on one thread, so ${r.to} partitions add no throughput here: the ratio is what
moving costs ingest. A group's wait is what its move event reports: from the release at the
old partition to the switch of routing, while posts holding its keys are refused with \`503
BACKPRESSURE\` and resent. Lowering the count (8 → 3 in the issue) is not built yet, so not measured.

| | before (P=${r.from}) | while the groups move |
| --- | --- | --- |
| ingest (events/s) | ${fmt(r.before.eventsPerSecond)} | ${fmt(r.during.eventsPerSecond)} |
| p50 / p99 acknowledgement (ms) | ${fmt(r.before.p50Ms, 1)} / ${fmt(r.before.p99Ms, 1)} | ${fmt(r.during.p50Ms, 1)} / ${fmt(r.during.p99Ms, 1)} |
| 503s resent | ${fmt(r.before.rejected)} | ${fmt(r.during.rejected)} |
| duration (s) | ${fmt(r.before.batches ? r.before.events / r.before.eventsPerSecond : 0, 1)} | ${fmt(r.totalMs / 1000, 1)} (PUT to the last move's end) |

Moves ended: ${r.movesEnded} (${r.givenUp} given up); a group's posts waited ${r.waits.p50Ms} ms at the
median and ${r.waits.maxMs} ms at most. Key groups per partition after: ${r.groupsPerPartition.join(", ")}.
Every acknowledged event against the served counts, key by key: ${r.lost} lost, ${r.duplicated} counted twice.

| target (issue 28) | measured | |
| --- | --- | --- |
${row("longest wait of a group ≤ 200 ms locally", `${r.waits.maxMs} ms`, r.waits.maxMs !== null && r.waits.maxMs <= 200)}
${row("ingest while moving ≥ 70% of before", `${(r.ratio * 100).toFixed(0)}%`, r.ratio >= 0.7)}
${row("0 lost, 0 duplicated", `${r.lost} lost, ${r.duplicated} duplicated`, r.lost === 0 && r.duplicated === 0)}
`;
}
