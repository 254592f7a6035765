// docs/BENCHMARKS.md's control-plane section (issue 29): calls received per object per second
// by kind, the busiest control-plane object against the platform's soft limit, fail-over of
// one partition among many dataflows, and creating and deleting them; this build next to
// the one before issue 29 (one coordinator for everything), in the same run.
import { fmt } from "./report-cost.mjs";

const KINDS = ["coordinator", "monitor", "directory", "replica"];

/** The targets on this build's runs: the busiest control-plane object at the largest size, its growth, fail-over. */
function targets(runs, limit) {
  const mine = runs.filter((r) => r.build === "this");
  const rows = [];
  for (const partitions of [...new Set(mine.map((r) => r.partitions))]) {
    const sized = mine.filter((r) => r.partitions === partitions).sort((a, b) => a.dataflows - b.dataflows);
    const small = sized[0];
    const large = sized.at(-1);
    if (!small || !large || small === large) continue;
    const growth = large.busiest.callsPerS / small.busiest.callsPerS;
    const row = (target, measured, met) => `| P=${partitions}: ${target} | ${measured} | ${met ? "met" : "**missed**"} |`;
    rows.push(row(`busiest control-plane object at ${large.dataflows} dataflows ≤ 100 calls/s`, `${fmt(large.busiest.callsPerS, 1)} calls/s (a ${large.busiest.kind}; ${fmt(100 * large.busiest.callsPerS / limit, 1)}% of ${limit}/s)`, large.busiest.callsPerS <= 100));
    rows.push(row(`its rate flat from ${small.dataflows} to ${large.dataflows} dataflows (at most 1.2×)`, `${fmt(small.busiest.callsPerS, 1)} → ${fmt(large.busiest.callsPerS, 1)} calls/s (${fmt(growth, 2)}×)`, growth <= 1.2));
    rows.push(row(`fail-over of one partition among ${large.dataflows} dataflows ≤ 1.5 s`, `${fmt(large.failover.unavailabilityMs)} ms (workerd at ${fmt(100 * large.workerdCpuShare)}% of a core)`, large.failover.unavailabilityMs <= 1_500));
  }
  return rows.join("\n");
}

/** The section, or a line saying the run had no control-plane scenario (results of an older run). */
export function controlPlaneSection(results) {
  const c = results.controlPlane;
  if (!c) return "## Control plane (issue 29)\n\nNot measured in this run.\n";
  const perKind = (run, kind) => {
    const k = run.byKind[kind];
    return k ? `${fmt(k.objects)}: ${fmt(k.perObjectPerS, 1)} / ${fmt(k.busiestPerS, 1)}` : "—";
  };
  const rows = c.runs.map(
    (r) =>
      `| ${r.build === "this" ? "this build" : `before (${c.before?.commit ?? "?"})`} | ${fmt(r.dataflows)} × P=${r.partitions} (${fmt(r.replicas)}) | a ${r.busiest.kind}: **${fmt(r.busiest.callsPerS, 1)}** (${fmt(100 * r.busiest.shareOfLimit, 1)}%) | ${KINDS.map((k) => perKind(r, k)).join(" | ")} | ${fmt(100 * r.workerdCpuShare)}% | ${fmt(r.reads.reads)} | ${fmt(r.failover.unavailabilityMs)} ms | ${fmt(r.createMs / 1000, 1)} s | ${fmt(r.deleteMs / 1000, 1)} s |`,
  );
  return `## Control plane (issue 29)

\`bench/control-plane.mjs\`: N dataflows (P partitions, R=2), each on its own stream, in one
workerd of the traced build (\`bench/trace\`: every call an object receives is recorded with its
time); each stream receives one ${c.trickle.events}-event batch every ${c.trickle.everyMs / 1000} s, and ${c.readers}
readers read a page of results of a random dataflow, ${c.readsPerS ?? "?"} reads a second in all. Calls received are counted over
${c.runs[0] ? fmt(c.runs[0].measureMs / 1000) : "?"} s per object and grouped by kind (a method an object calls on itself before its first
await is not counted as received). "Before" is the product before issue 29, where one coordinator
object held every routing table, answered every lookup and ran the one monitor, built from commit
${c.before?.commit ?? "?"} with its own traced build and run in turns with this build, size by size.
State is on tmpfs: with 1,600 replicas, local SQLite's fsync at every commit would set the pace.
Fail-over: a writer posts 5-event batches for partition 0 of the first dataflow one after another;
its primary crashes; the longest wait for an acknowledgement across the crash. Creating and deleting
run 8 at a time.

Calls received per second — per kind: objects: mean per object / busiest object.

| build | dataflows × partitions (replicas) | busiest control-plane object, calls/s (% of ${c.objectLimitPerS}/s) | registry | monitors | directories | replicas | workerd CPU | reads answered | fail-over | create all | delete all |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${rows.join("\n")}

(Before issue 29 there are no monitors or directories: the coordinator is the registry column.)

| target (issue 29) | measured (this build) | |
| --- | --- | --- |
${targets(c.runs, c.objectLimitPerS)}

Read with care: locally every object shares workerd's one thread, so at 200 dataflows of 4
partitions (1,600 replicas) the trickle, the reads and every object's alarms queue on it
in both builds, and a fail-over waits in that queue with everything else; the P=1 runs (400
replicas) stay within it. On the platform each object has a thread of its own: what matters
there is the busiest object's rate, which no longer grows with the number of dataflows. A
healthy, active dataflow without clock ticks is probed only every FLUX_WATCH_PROBE_MS (10 s):
its routers, readers and upstream partitions report a failed call to its monitor at once, so a
failure that nobody's call meets waits up to that long to be found (docs/RECOVERY.md).
`;
}
