// The issue-12 sections of docs/BENCHMARKS.md: Flux against the plain baseline at P = 1, 4,
// 16 and three batch sizes, the price table and US dollars per million events, the idle
// cost, the V8 profile and the issue's targets, each met or missed by a stated margin.
import { PRICES } from "./costs.mjs";
import { lineChart } from "./svg.mjs";

export const fmt = (n, digits = 0) => (Number.isFinite(n) ? n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits }) : "n/a");
export const pct = (r) => `${(r * 100).toFixed(0)}%`;
const usd = (n) => (Number.isFinite(n) ? `$${n < 0.01 ? n.toFixed(5) : n.toFixed(4)}` : "n/a");
/** Each round's ratio of cell `a`'s events/s to cell `b`'s in the same round (a run's rounds differ by up to a fifth). */
export const roundRatios = (a, b) => (a?.rounds ?? []).map((r, i) => r.eventsPerSecond / (b?.rounds?.[i]?.eventsPerSecond ?? NaN)).filter(Number.isFinite);
/** The matrix cell of `label` at `partitions` and `batchSize`. */
export const cell = (results, label, partitions, batchSize = 100) => results.matrix.find((c) => c.label === label && c.partitions === partitions && c.batchSize === batchSize);

/** How the 100-event rows were chosen, when they ran in rounds. */
function roundsSentence(results) {
  const rounds = results.matrix.find((c) => c.batchSize === 100)?.rounds?.length ?? 1;
  if (rounds < 2) return "";
  return ` The 100-event cells ran in ${rounds} rounds, every other one in reverse order: in
\`--cells --rounds 3\` runs (2026-12-02) one design's warm cells differed by up to a fifth,
and the first cells of a fresh workerd ran at half speed or less; run against itself
(\`--before HEAD\`), one build's medians in its two workerd processes differed by 10% at R=1
and 2% at R=2 (P=4). Each row is that design's
round with the median events/s, whole (its latencies, CPU and counters), the range of all
its rounds in brackets. Every ratio below is taken between such median rounds.`;
}

function matrixRows(results, batchSize) {
  return results.matrix
    .filter((c) => c.batchSize === batchSize)
    .sort((a, b) => a.partitions - b.partitions)
    .map((c) => {
      const k = c.cost?.per1k;
      const counted = k ? `${fmt(k.calls, 1)} | ${fmt(k.rowsWritten, 1)} | ${fmt(k.rowsRead, 1)} | ${fmt(k.workerRequests, 1)} | ${usd(c.cost.usdPerMillion.total)}` : "counters unavailable | | | |";
      const range = c.rounds?.length > 1 ? ` (${fmt(Math.min(...c.rounds.map((r) => r.eventsPerSecond)))}–${fmt(Math.max(...c.rounds.map((r) => r.eventsPerSecond)))})` : "";
      return `| ${c.label} | ${c.partitions} | ${fmt(c.eventsPerSecond)}${range} | ${fmt(c.p50Ms, 1)} | ${fmt(c.p99Ms, 1)} | ${fmt(c.cpuMicrosPerEvent, 1)} | ${counted} |`;
    });
}

const MATRIX_HEAD = "| design | P | events/s | p50 ms | p99 ms | workerd CPU µs/event | DO calls /1k events | rows written /1k | rows read /1k | Worker requests /1k | $ per M events |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |";

function methodLines(results) {
  return results.matrix
    .filter((c) => c.batchSize === 100 && c.cost)
    .map((c) => {
      const methods = Object.entries(c.cost.per1k.byMethod).sort((a, b) => b[1] - a[1]).map(([m, n]) => `${m} ${fmt(n, 1)}`);
      const u = c.cost.usdPerMillion;
      return `| ${c.label} | ${c.partitions} | ${methods.join(", ") || "none"} | ${usd(u.calls)} | ${usd(u.rowsWritten)} | ${usd(u.rowsRead)} | ${usd(u.workerRequests)} | ${usd(u.cpu)} | ${usd(u.total)} |`;
    });
}

export function writePartitionsPlot(results, path, writeFile) {
  const labels = [...new Set(results.matrix.map((c) => c.label))];
  writeFile(
    path,
    lineChart({
      title: "Throughput against partitions (8 producers, 100-event batches)",
      xLabel: "partitions P (log scale)",
      yLabel: "acknowledged events/s",
      logX: true,
      series: labels.map((label) => ({ name: label, points: [1, 4, 16].map((p) => [p, cell(results, label, p)?.eventsPerSecond ?? 0]) })),
    }),
  );
}

function beforeSection(results) {
  const lowRow = (c) => `| ${c.label} | ${fmt(c.eventsPerSecond)} | ${fmt(c.p50Ms, 1)} | ${fmt(c.p99Ms, 1)} | ${fmt(c.cpuMicrosPerEvent, 1)} |`;
  const low = `Low load: one producer, P=4, R=2, 100-event batches:

| design | events/s | p50 ms | p99 ms | workerd CPU µs/event |
| --- | --- | --- | --- | --- |
${(results.lowLoad ?? []).map(lowRow).join("\n")}`;
  if (!results.before) return low;
  const rows = [];
  for (const r of [1, 2]) {
    for (const p of [1, 4, 16]) {
      const now = cell(results, `Flux R=${r}`, p);
      const was = cell(results, `Flux R=${r} before`, p);
      if (!now || !was) continue;
      rows.push(`| ${r} | ${p} | ${fmt(was.eventsPerSecond)} → ${fmt(now.eventsPerSecond)} (${fmt(now.eventsPerSecond / was.eventsPerSecond, 2)}×) | ${fmt(was.p50Ms, 1)} → ${fmt(now.p50Ms, 1)} | ${fmt(was.cpuMicrosPerEvent, 1)} → ${fmt(now.cpuMicrosPerEvent, 1)} (${fmt(now.cpuMicrosPerEvent / was.cpuMicrosPerEvent, 2)}×) |`);
    }
  }
  return `### Before and after, same run

"Before" is the product at \`${results.before.ref}\`${results.before.ref.startsWith(results.before.commit) ? "" : ` (${results.before.commit})`}, bundled from that commit and run
in its own workerd beside today's, cell by cell (it has no counters, so only time and CPU
compare). 8 producers, 100-event batches:

| R | P | events/s before → now | p50 ms before → now | workerd CPU µs/event before → now |
| --- | --- | --- | --- | --- |
${rows.join("\n")}

${low}`;
}

function idleSection(idle) {
  if (!idle) return "Not run.";
  const row = (name, w) =>
    `| ${name} | ${fmt(w.measured.seconds, 1)} s | ${fmt(w.measured.calls)} (${fmt(w.measured.callsMade)} made by the isolate) | ${fmt(w.measured.rowsWritten)} | ${fmt(w.measured.rowsRead)} | ${fmt(w.measured.objectSeconds, 0)} | ${fmt(w.perHour.calls)} | ${fmt(w.perHour.rowsWritten)} | ${fmt(w.perHour.objectSeconds)} | ${usd(w.usdPerDay.total)} |`;
  const d = idle.steady.usdPerDay;
  return `One P=4, R=2 dataflow alone in a fresh workerd (the product's code with its object entry
points traced, \`bench/trace/\`), after a 1 s burst of ingest, left idle for
**${fmt(idle.idleSeconds, 0)} s**. Calls are those the objects received (RPC calls, fetches and alarms,
counted by the trace; "made by the isolate" is the product's own counter of calls it made);
rows are the product's counters, read every 2 s. Billing model for duration: an object is
billed from each call it receives until ${idle.billedAfterCallMs / 1000} s after its last one (when it could
hibernate), at 128 MB. The steady state is ${idle.steady.how} (${fmt(idle.steady.fromS, 1)}–${fmt(idle.steady.toS, 1)} s);
$/day scales it to 24 h.

| window | length | calls received | rows written | rows read | object-seconds | calls per idle hour | rows written per hour | object-seconds per hour | $ per idle dataflow per day |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${row("whole period", idle.whole)}
${row("steady state", idle.steady)}

Steady, per day: calls ${usd(d.calls)}, rows written ${usd(d.rowsWritten)}, rows read ${usd(d.rowsRead)}, duration ${usd(d.duration)}.
Cloudflare's pricing page (as of ${PRICES.date}) counts alarm invocations as requests, as counted here, and
says an idle object that is eligible for hibernation is not billed for duration even before it
hibernates; if every object here were eligible between calls, the duration line would all but
vanish and the day would cost ${usd(d.total - d.duration)} (calls and rows alone).

${quietDaySection(idle.quietDay)}

Monitor rounds seen (calls closer than 2 s form one round; s since the idle period began): ${idle.rounds.map((r) => `${fmt(r.fromS, 1)}–${fmt(r.toS, 1)} s: ${r.calls} calls`).join("; ")}.
Objects (calls received over the whole period, billed seconds): ${idle.objects.map((o) => `${o.object} ${o.calls}, ${fmt(o.billedSeconds, 0)} s`).join("; ")}.`;
}

/** The day priced per round: the measured window holds only the start of the monitor's back-off. */
function quietDaySection(q) {
  if (!q) return "A quiet day is not priced: the window held no idle probe round.";
  const r = q.perRound;
  const d = q.usdPerDay;
  return `**A quiet day.** The idle probes thin out geometrically (each as far after the last as the
dataflow has been quiet, at most \`FLUX_IDLE_PROBE_MS\` = ${q.schedule.idleProbeMs / 60_000} min apart), so the ${fmt(q.roundsMeasured)}
round(s) of the steady window above are the densest part of the back-off and scaling them to 24 h
overstates a day. Priced per round instead: the product's own schedule function
(\`nextProbeAtMs\`) makes **${fmt(q.roundsPerDay)} idle rounds** in the 24 h after a dataflow's last write, and a round
measured here costs ${fmt(r.calls, 1)} calls, ${fmt(r.rowsWritten, 1)} rows written, ${fmt(r.rowsRead, 0)} rows read and ${fmt(r.objectSeconds, 0)} billed
object-seconds: **${usd(d.total)} per quiet day** (calls ${usd(d.calls)}, rows written ${usd(d.rowsWritten)}, rows read ${usd(d.rowsRead)},
duration ${usd(d.duration)}). This multiplies measured rounds by a counted schedule; a day-long idle run was not made.`;
}

function profileSection(p) {
  if (!p) return "Not run (quick mode, or run `npm run bench -- --profile`).";
  const top = p.top.map((f, i) => `| ${i + 1} | \`${f.function}\` | ${f.where} | ${f.source ? `\`${f.source.replace(/\|/g, "\\|")}\`` : ""} | ${pct(f.share)} | ${fmt(f.microsPerEvent, 1)} | ${f.mostlyFor} |`);
  const roles = p.roles.slice(0, 12).map((r) => `| ${r.role} | ${pct(r.share)} | ${fmt(r.microsPerEvent, 1)} |`);
  return `A V8 CPU profile of the product's isolate (Worker and every object: locally they share one
isolate and one thread) over ${fmt(p.durationMs / 1000, 1)} s of steady P=${p.partitions ?? 4}, R=2 load (8 producers, 100-event batches),
sampled every ${p.samplingIntervalMicros} µs through the inspector (Miniflare's \`inspectorPort\`, Chrome DevTools
Protocol)${p.takenAt ? `, taken ${p.takenAt.slice(0, 16).replace("T", " ")} UTC` : ""}. ${fmt(p.events)} events (${fmt(p.eventsPerSecond)} events/s); workerd used ${fmt(p.workerdCpuMicrosPerEvent, 1)} µs CPU per event.
V8 samples wall-clock time on the isolate's thread: its "busy" samples (${fmt(p.busyMicrosPerEvent, 1)} µs per event)
also count time the thread waited inside native calls or for a core on this shared machine,
so read the shares; the µs columns are sampled time, not CPU. \`(program)\` is native work
outside any JS function (event loop, HTTP, RPC transport); native functions called from JS
(SQLite's \`exec\` and \`transactionSync\`, \`getByName\`, \`Response\`) appear by name, and the time a
JS frame spends passing arguments to an object call (their serialization) counts as that
frame's own. Regenerate with
\`npm run bench -- --profile\` (writes \`bench/results/profile.local.json\`; \`--partitions N\` profiles P=N, \`--replication 1\` R=1,
\`--cpuprofile <path>\` keeps the raw V8 profile for Chrome DevTools). The replica's apply path alone (parsing a log
entry's records, the aggregate, dedup), per record in Node: \`npm run bench:apply\`
(\`bench/replica-apply.mjs\`; \`--root <dir>\` measures another tree, such as an older commit's \`shared/\`).

By role (the stack's outermost entry frame: the router's handlers, or the object method the call entered):

| role | share of busy samples | sampled µs/event |
| --- | --- | --- |
${roles.join("\n")}
${p.kinds ? `
By kind of work (each sample's own frame: SQLite; object calls, whose argument serialization counts as the calling frame's own; JSON and zod; the operator; the router's HTTP work; the runtime outside JS):

| kind | share of busy samples | sampled µs/event |
| --- | --- | --- |
${p.kinds.map((k) => `| ${k.kind} | ${pct(k.share)} | ${fmt(k.microsPerEvent, 1)} |`).join("\n")}
` : ""}
Top ${p.top.length} functions by self time:

| # | function | where (bundle line) | source | share | sampled µs/event | mostly for |
| --- | --- | --- | --- | --- | --- | --- |
${top.join("\n")}`;
}

/** The plain baseline's profile under the same load, by kind of work beside the product's: what both pay, and what only Flux does. */
function plainProfileSection(flux, plain) {
  if (!flux || !plain) return "";
  const kinds = [...new Set([...flux.kinds, ...plain.kinds].map((k) => k.kind))];
  const us = (p, kind) => p.kinds.find((k) => k.kind === kind)?.microsPerEvent ?? 0;
  const rows = kinds
    .sort((a, b) => us(flux, b) - us(flux, a))
    .map((kind) => `| ${kind} | ${fmt(us(flux, kind), 1)} | ${fmt(us(plain, kind), 1)} | ${us(flux, kind) >= us(plain, kind) ? "+" : "−"}${fmt(Math.abs(us(flux, kind) - us(plain, kind)), 1)} |`);
  const top = plain.top.slice(0, 8).map((f, i) => `| ${i + 1} | \`${f.function}\` | ${f.where} | ${f.source ? `\`${f.source.replace(/\|/g, "\\|")}\`` : ""} | ${pct(f.share)} | ${fmt(f.microsPerEvent, 1)} | ${f.mostlyFor} |`);
  return `
### The plain baseline's isolate under the same load

The same profile of the plain baseline's own workerd (\`npm run bench -- --profile --plain\`), P=${plain.partitions}, 8 producers,
100-event batches, ${fmt(plain.events)} events (${fmt(plain.eventsPerSecond)} events/s), taken ${plain.takenAt.slice(0, 16).replace("T", " ")} UTC; workerd used ${fmt(plain.workerdCpuMicrosPerEvent, 1)} µs CPU per event
(Flux R=2 above: ${fmt(flux.workerdCpuMicrosPerEvent, 1)}). Sampled µs per event by kind of work, the product's beside the
baseline's (the baseline's object calls are its Worker passing each sub-batch's records to its object
as an array, which the runtime serializes; the product passes one JSON string per call):

| kind | Flux R=2 | plain | Flux − plain |
| --- | --- | --- | --- |
${rows.join("\n")}
| all busy samples | ${fmt(flux.busyMicrosPerEvent, 1)} | ${fmt(plain.busyMicrosPerEvent, 1)} | ${flux.busyMicrosPerEvent >= plain.busyMicrosPerEvent ? "+" : "−"}${fmt(Math.abs(flux.busyMicrosPerEvent - plain.busyMicrosPerEvent), 1)} |

The baseline's top ${top.length} functions by self time:

| # | function | where (bundle line) | source | share | sampled µs/event | mostly for |
| --- | --- | --- | --- | --- | --- | --- |
${top.join("\n")}
`;
}

function targetRows(results) {
  const tp = (label, p) => cell(results, label, p);
  const r2 = (p) => tp("Flux R=2", p)?.eventsPerSecond;
  const rows = [];
  const ratio = (name, value, goal, detail) => {
    const met = value >= goal;
    rows.push(`| ${name} | ${fmt(value, 2)}${detail ? ` (${detail})` : ""} | ${met ? `met (${fmt(value / goal, 2)}× the target)` : `**missed**: ${fmt(value / goal, 2)} of the target, needs ${fmt(goal / value, 2)}×`} |`);
  };
  // Same-round ratios beside the median rounds' one.
  const rounds = (a, b) => {
    const xs = roundRatios(tp(a, 4), tp(b, 4));
    return xs.length > 1 ? `; same-round ratios ${xs.map((x) => fmt(x, 2)).join(", ")}` : "";
  };
  ratio("R=2 ≥ plain at P=4 (ratio)", r2(4) / tp("plain", 4)?.eventsPerSecond, 1, `${fmt(r2(4))} vs ${fmt(tp("plain", 4)?.eventsPerSecond)} events/s${rounds("Flux R=2", "plain")}`);
  ratio("R=2 ≥ plain at P=16 (ratio)", r2(16) / tp("plain", 16)?.eventsPerSecond, 1, `${fmt(r2(16))} vs ${fmt(tp("plain", 16)?.eventsPerSecond)} events/s`);
  ratio("R=2 at P=16 ≥ 0.7 × R=2 at P=1", r2(16) / r2(1), 0.7, `${fmt(r2(16))} vs ${fmt(r2(1))} events/s`);
  ratio("R=2 / R=1 ≥ 0.75 at P=4", r2(4) / tp("Flux R=1", 4)?.eventsPerSecond, 0.75, `P=1: ${fmt(r2(1) / tp("Flux R=1", 1)?.eventsPerSecond, 2)}, P=16: ${fmt(r2(16) / tp("Flux R=1", 16)?.eventsPerSecond, 2)}${rounds("Flux R=2", "Flux R=1")}`);
  ratio("R=2 at P=4 ≥ 0.25 × raw in-process", r2(4) / results.raw.eventsPerSecond, 0.25, `raw ${fmt(results.raw.eventsPerSecond)} events/s`);
  const cost = tp("Flux R=2", 4)?.cost?.usdPerMillion.total;
  if (Number.isFinite(cost)) {
    rows.push(`| ≤ $0.03 per million events at R=2, P=4 | ${usd(cost)} | ${cost <= 0.03 ? `met (${fmt(0.03 / cost, 1)}× under)` : `**missed** by ${fmt(cost / 0.03, 1)}× (${usd(cost - 0.03)} over)`} |`);
  } else rows.push("| ≤ $0.03 per million events at R=2, P=4 | counters unavailable | not measured |");
  const quiet = results.idle?.quietDay;
  const idle = quiet ? quiet.usdPerDay.total : results.idle?.steady.usdPerDay.total;
  const how = quiet ? `(${fmt(quiet.roundsPerDay)} idle rounds a day at the measured cost per round)` : "(steady window scaled to a day)";
  if (Number.isFinite(idle)) rows.push(`| ≤ $0.01 per idle dataflow per day (P=4, R=2) | ${usd(idle)} ${how} | ${idle <= 0.01 ? `met (${fmt(0.01 / idle, 1)}× under)` : `**missed** by ${fmt(idle / 0.01, 1)}×`} |`);
  else rows.push("| ≤ $0.01 per idle dataflow per day (P=4, R=2) | rows unavailable (no counters) | not measured |");
  const lowNow = results.lowLoad?.find((c) => c.label === "Flux R=2");
  const lowWas = results.lowLoad?.find((c) => c.label === "Flux R=2 before");
  if (lowNow && lowWas) {
    const r = lowNow.p50Ms / lowWas.p50Ms;
    rows.push(`| low load (one producer, P=4, R=2): median latency not worse than before | ${fmt(lowWas.p50Ms, 1)} → ${fmt(lowNow.p50Ms, 1)} ms (${fmt(r, 2)}×) | ${r <= 1 ? "met" : `**missed**: ${fmt((r - 1) * 100, 0)}% slower`} |`);
  } else rows.push("| low load: median latency not worse than before | no before build in this run (`--before <ref>`) | not measured |");
  const big = results.recovery.find((r) => r.keys === 1_000_000);
  rows.push(big ? `| ingest ≥ 70% during a 1M-key seed | ${pct(big.ratio)} over ${fmt(big.seedMs)} ms | ${big.ratio >= 0.7 ? "met" : `**missed** by ${fmt((0.7 - big.ratio) * 100, 0)} points`} |` : "| ingest ≥ 70% during a 1M-key seed | not run (quick mode) | not measured |");
  // The probe timeout's default (FLUX_PROBE_TIMEOUT_MS): a longer stall can miss probes.
  const stall = big?.checkpoint?.longestStallMs;
  rows.push(stall === undefined ? "| longest checkpoint stall at 1M keys ≤ probe timeout (250 ms) | not measured in this run | not measured |" : `| longest checkpoint stall at 1M keys ≤ probe timeout (250 ms) | ${fmt(stall)} ms | ${stall <= 250 ? "met" : `**missed** by ${fmt(stall / 250, 1)}×`} |`);
  const f = results.failover;
  rows.push(`| ≤ 1.5 s unavailability, crash (hang and slow: [FAILOVER.md](FAILOVER.md), \`npm run bench:failover\`) | ${fmt(f.unavailabilityMs)} ms, ${f.lost} lost, ${f.duplicated} duplicated | ${f.unavailabilityMs <= 1500 && f.lost === 0 && f.duplicated === 0 ? `met (${fmt(1500 - f.unavailabilityMs)} ms to spare)` : "**missed**"} |`);
  return rows.join("\n");
}

/** The Markdown of the issue-12 sections. */
export function costSections(results) {
  const batchTables = [10, 1000]
    .filter((b) => results.matrix.some((c) => c.batchSize === b))
    .map((b) => `Batch size ${b}:\n\n${MATRIX_HEAD}\n${matrixRows(results, b).join("\n")}`)
    .join("\n\n");
  return `## Flux against the plain baseline (issue 12)

The plain baseline (\`bench/plain/\`) is what a user could write in an afternoon: a Worker that
validates each batch with the product's own router code, hash-splits it over P Durable
Objects, and each object aggregates its sub-batch in memory with the product's own window
operator and inserts it as one SQLite row: no replication, no dedup, no checkpoints. It is
bundled the same way (\`wrangler deploy --dry-run\`), runs in its own workerd next to the
product's, and gets the same event generator and load. It counts its own calls and rows
(\`GET /v1/admin/counters\`, the product's shape). The \`simple\` rows are a second, simpler
baseline (\`bench/simple/\`, issue 30), described with issue 30's ratios below. Every cell: 8 producers, closed loop,
10,000 keys, a warm-up, then ${fmt(results.matrix[0]?.durationMs / 1000, 1)} s (100-event batches) or half that (other sizes);
counters and workerd CPU (\`/proc/<pid>/stat\` of that instance's process) are read
around the measured part and divided by acknowledged events. Each Flux dataflow is deleted
after its cell so that later cells do not count its monitor traffic.${roundsSentence(results)}${results.countersAvailable ? "" : "\n\n**The Flux build measured here has no `GET /v1/admin/counters`: counters unavailable for Flux.**"}

${MATRIX_HEAD}
${matrixRows(results, 100).join("\n")}

![throughput against partitions](bench-partitions.svg)

${batchTables}

${beforeSection(results)}

### US dollars per million events

Cloudflare's published prices as of **${PRICES.date}**:

| item | price (USD) |
| --- | --- |
${PRICES.lines.map((l) => `| ${l.item} | ${l.usd} ${l.unit} |`).join("\n")}

$ per million events = counted calls × DO request price + rows written and read × row prices +
Worker requests × request price + workerd CPU × CPU price. Locally workerd's CPU includes the
objects' and Miniflare's own entry worker; it is all charged at the CPU price (on the platform
objects are billed for duration instead, which under steady load depends on how many objects
are kept busy, not on events; it is left out here and counted in the idle cost below).
100-event batches, by price line, with calls per 1,000 events by method:

| design | P | calls /1k events by method | DO calls | rows written | rows read | Worker requests | CPU | total $/M |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
${methodLines(results).join("\n")}

## Idle cost (issue 12)

${idleSection(results.idle)}

## Profile: where workerd's CPU goes (issue 12)

${profileSection(results.profile)}
${plainProfileSection(results.profile, results.plainProfile)}

## Targets (issue 12)

Same run, 8 producers × 100-event batches, 10,000 keys:

| target | measured (this run) | |
| --- | --- | --- |
${targetRows(results)}
`;
}
