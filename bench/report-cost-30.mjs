// Issue 30's section of docs/BENCHMARKS.md: the product against the faster of its two
// baselines (bench/plain, bench/simple) cell by cell, and the issue's targets, each met or
// missed by a stated margin, and the bytes per key of each kind of keyed state. Every figure comes from the same run.
import { cell, fmt, roundRatios } from "./report-cost.mjs";

const BASELINES = ["plain", "simple"];

/** The faster baseline's median-round cell at P=`partitions` (100-event batches). */
function fasterBaseline(results, partitions) {
  const cells = BASELINES.map((label) => cell(results, label, partitions)).filter(Boolean);
  return cells.sort((a, b) => b.eventsPerSecond - a.eventsPerSecond)[0];
}

/** One row per P: each baseline's events/s and the product's ratios to the faster one. */
function ratioRows(results) {
  return [1, 4, 16].flatMap((p) => {
    const faster = fasterBaseline(results, p);
    const [r1, r2] = ["Flux R=1", "Flux R=2"].map((label) => cell(results, label, p));
    if (!faster || !r1 || !r2) return [];
    const each = BASELINES.map((label) => fmt(cell(results, label, p)?.eventsPerSecond)).join(" | ");
    const same = roundRatios(r2, faster);
    return [`| ${p} | ${each} | ${faster.label} | ${fmt(r1.eventsPerSecond / faster.eventsPerSecond, 2)} | ${fmt(r2.eventsPerSecond / faster.eventsPerSecond, 2)}${same.length > 1 ? ` (rounds: ${same.map((x) => fmt(x, 2)).join(", ")})` : ""} | ${fmt(r2.p99Ms / faster.p99Ms, 2)} |`];
  });
}

function targetRows(results) {
  const rows = [];
  const row = (name, value, goal, detail, atMost = false, shown = fmt(value, 2)) => {
    if (!Number.isFinite(value)) return rows.push(`| ${name} | not measured in this run | not measured |`);
    const met = atMost ? value <= goal : value >= goal;
    const margin = atMost ? goal / value : value / goal;
    rows.push(`| ${name} | ${shown}${detail ? ` (${detail})` : ""} | ${met ? `met (${fmt(margin, 2)}× the target)` : `**missed**: ${fmt(margin, 2)} of the target, needs ${fmt(1 / margin, 2)}×`} |`);
  };
  const r2 = (p) => cell(results, "Flux R=2", p);
  for (const [p, goal] of [[1, 1], [4, 1], [16, 2]]) {
    const faster = fasterBaseline(results, p);
    row(`R=2 ≥ ${goal}× the faster baseline at P=${p}`, r2(p)?.eventsPerSecond / faster?.eventsPerSecond, goal, faster && `${fmt(r2(p)?.eventsPerSecond)} vs ${faster.label} ${fmt(faster.eventsPerSecond)} events/s`);
  }
  row("R=2 / R=1 ≥ 0.8 at P=4", r2(4)?.eventsPerSecond / cell(results, "Flux R=1", 4)?.eventsPerSecond, 0.8);
  const faster4 = fasterBaseline(results, 4);
  row("p99 of an acknowledged batch at P=4, R=2 ≤ 2× the faster baseline's", r2(4)?.p99Ms / faster4?.p99Ms, 2, faster4 && `${fmt(r2(4)?.p99Ms, 1)} vs ${faster4.label} ${fmt(faster4.p99Ms, 1)} ms`, true);
  const usd = r2(4)?.cost?.usdPerMillion.total;
  row("$ per million events at R=2, P=4 ≤ $0.02", usd, 0.02, "", true, `$${usd?.toFixed(4)}`);
  return rows.join("\n");
}

/** Issue 30's memory target: keyed state with count, sum, min and max at most this many bytes per key and replica. */
const TARGET_BYTES_PER_KEY = 30;

/** Bytes per key of each kind of keyed state, and the target, when this run measured them. */
function stateBytesPart(results) {
  const m = results.stateBytes;
  if (!m) return "State memory per key was not measured in this run.";
  const target = m.rows.find((r) => r.kind.startsWith("count + sum + min + max"));
  const met = target && target.bytesPerKey <= TARGET_BYTES_PER_KEY;
  return `State memory per key (\`bench/state-bytes.mjs\`, in Node ${m.node}):
for each kind of keyed aggregate, one operator with one tumbling window fed one record per key
(keys of ${m.keyChars} characters, parsed from JSON as a replica's log hands them over), and
the bytes it holds after full collections, on the heap and in typed arrays beside it (whose
capacity doubles as rows are added, so up to half of that column is room not used yet),
divided by the keys. \`distinct\` and \`topk\` see one value per key here: a key's sketch
grows with the values it sees, a HyperLogLog up to 2^precision bytes. Node's V8 is built
without pointer compression and workerd's with it (its binary reserves a pointer compression
cage): a pointer takes 8 bytes here and 4 there, so the heap column is an upper bound for
workerd (a key's \`Map\` entry, its slot in the key arrays and its string's header shrink
there; the characters and the typed arrays do not). Measuring inside workerd is still to do.

| state | keys | heap B/key | typed arrays B/key | total B/key | MB per million keys |
| --- | --- | --- | --- | --- | --- |
${m.rows.map((r) => `| ${r.kind} | ${fmt(r.keys)} | ${fmt(r.heapBytesPerKey, 1)} | ${fmt(r.bufferBytesPerKey, 1)} | ${fmt(r.bytesPerKey, 1)} | ${fmt(r.bytesPerKey, 0)} |`).join("\n")}

| target (issue 30) | measured (this run) | |
| --- | --- | --- |
| count, sum, min and max ≤ ${TARGET_BYTES_PER_KEY} MB per million keys per replica | ${target ? `${fmt(target.bytesPerKey, 0)} MB` : "not measured"} | ${!target ? "not measured" : met ? "met" : `**missed**: needs ${fmt(target.bytesPerKey / TARGET_BYTES_PER_KEY, 1)}× less`} |`;
}

/** The Markdown of issue 30's section. */
export function perEventSection(results) {
  if (!BASELINES.every((label) => cell(results, label, 4))) return "";
  return `## Against the faster of two baselines (issue 30)

Issue 30 measures the product against the faster of two designs a user could write in an
afternoon, both bundled like the product and run in a workerd of their own beside it in the
matrix above, with the same load. \`plain\` (\`bench/plain/\`) is the one described above: the
product's router code and window operator, records re-serialized into each object's row.
\`simple\` (\`bench/simple/\`) is simpler still: the Worker checks each event with a loop of its
own and sends each object its sub-batch as the JSON text of the events; the object parses it,
counts and sums per key in a \`Map\` per window and stores the text it received as one row.
Neither replicates, deduplicates, checkpoints or closes windows. Which of the two is faster
changes from run to run and with P, so each ratio below is taken against the faster one in
this run (median rounds; the same-round ratios beside it).

| P | plain events/s | simple events/s | faster | R=1 / faster | R=2 / faster | R=2 p99 / faster's p99 |
| --- | --- | --- | --- | --- | --- | --- |
${ratioRows(results).join("\n")}

Targets of issue 30 for throughput, replication cost, latency and price (state memory below):

| target | measured (this run) | |
| --- | --- | --- |
${targetRows(results)}

${stateBytesPart(results)}
`;
}
