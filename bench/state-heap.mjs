// Heap cost of a replica's operator state (issue 12): in workerd V8 marks the whole heap in
// one pause (no incremental marking), and the pause grows with the number of live objects,
// so a state of many small objects stalls every object of the isolate at each full GC.
// Builds the benchmark's state (count + sum, one tumbling window) of `--keys` keys, as a
// replica applying log entries does and as a fresh replica restoring a sliced checkpoint
// does, and prints per state: heap bytes it holds (and array buffer bytes beside the heap), heap objects it holds (from heap
// snapshots: only with `--objects`, slow above ~200k keys) and the least and median
// full-GC pause of `--gcs` forced collections while it is live.
// Run: npm run bench:apply -- --heap [--keys 1000000] [--gcs 5] [--objects] [--root <dir holding shared/>]
// (--root measures another tree, as in replica-apply.mjs.)
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { getHeapSnapshot, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { specFor } from "./scenarios.mjs";

const { values: args } = parseArgs({
  options: { heap: { type: "boolean" }, keys: { type: "string", default: "1000000" }, gcs: { type: "string", default: "5" }, objects: { type: "boolean", default: false }, root: { type: "string", default: resolve(import.meta.dirname, "..") } },
});
// Forced full collections, without asking for `node --expose-gc`.
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");
const load = (path) => import(pathToFileURL(resolve(args.root, path)).href);
const { compileDataflow } = await load("shared/operators/compile.ts");
const { CheckpointBuilder, checkpointPieces } = await load("shared/checkpoint/checkpoint-pieces.ts");
const { piecesToRows } = await load("shared/checkpoint/checkpoint-rows.ts");
// In wire/dataflow-spec.ts before issue 26 moved it: an older tree (--root) still loads.
const { DataflowSpecSchema } = await load("shared/dataflow-checks/dataflow-spec-schema.ts").catch(() => load("shared/wire/dataflow-spec.ts"));

const KEYS = Number(args.keys);
const spec = DataflowSpecSchema.parse(specFor("heap", 1, 2));

/** A live operator holding every key once, fed as the log holds entries: JSON of 2,000 `[key, timeMs, bytes]` records. */
function applied() {
  const live = compileDataflow(spec).bind();
  for (let from = 0; from < KEYS; from += 2_000) {
    const records = [];
    for (let k = from; k < Math.min(KEYS, from + 2_000); k++) records.push([`k${k}`, 1_000, k % 1_500]);
    live.process(JSON.parse(JSON.stringify(records)), () => {});
  }
  return live;
}

/** CPU ms spent writing and restoring checkpoints (`restored`). */
const checkpointMs = { write: 0, restore: 0, slices: 0 };

/** The same state as a fresh replica rebuilds it from a sliced checkpoint's rows. */
function restored(from) {
  const builder = new CheckpointBuilder(spec);
  let cpu = process.cpuUsage();
  const rows = piecesToRows(checkpointPieces(1, 0, {}, from, 5_000), 1_000_000);
  checkpointMs.write += cpuMsSince(cpu);
  cpu = process.cpuUsage();
  for (const row of rows) builder.push(row);
  checkpointMs.restore += cpuMsSince(cpu);
  checkpointMs.slices += rows.length - 1;
  return builder.finish().operator;
}

function cpuMsSince(from) {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1e3;
}

/** Bytes on the V8 heap, and in array buffers beside it (typed arrays' contents), after full collections. */
const heapUsed = () => {
  gc();
  gc();
  const { heapUsed: heap, arrayBuffers } = process.memoryUsage();
  return { heap, arrayBuffers };
};

/** Heap objects (snapshot nodes) alive now. */
async function heapObjects() {
  gc();
  let text = "";
  for await (const chunk of getHeapSnapshot()) text += chunk;
  const snapshot = JSON.parse(text);
  return snapshot.snapshot.node_count;
}

/** Least and median wall time of `args.gcs` forced full collections, ms. */
function gcPauses() {
  const ms = [];
  for (let i = 0; i < Number(args.gcs); i++) {
    const t = performance.now();
    gc();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return { least: ms[0], median: ms[Math.floor(ms.length / 2)] };
}

const f = (x) => x.toFixed(1);
console.log(`${args.root}: ${KEYS} keys, node ${process.version}`);
const base = heapUsed();
const baseObjects = args.objects ? await heapObjects() : 0;
const emptyGc = gcPauses();
console.log(`empty heap: ${f(base.heap / 2 ** 20)} MB, full GC ${f(emptyGc.least)} ms (least), ${f(emptyGc.median)} ms (median)`);
let live = applied();
for (const [name, make] of [
  ["applied from the log", () => live],
  ["restored from a sliced checkpoint", () => restored(live)],
]) {
  const state = make();
  live = state;
  const now = heapUsed();
  const bytes = now.heap - base.heap;
  const buffers = now.arrayBuffers - base.arrayBuffers;
  const objects = args.objects ? (await heapObjects()) - baseObjects : null;
  const pause = gcPauses();
  const perKey = objects === null ? "" : `, ${objects} objects (${f(objects / KEYS)} per key)`;
  console.log(`${name.padEnd(34)} heap ${f(bytes / 2 ** 20)} MB (${f(bytes / KEYS)} B per key) + array buffers ${f(buffers / 2 ** 20)} MB${perKey}; full GC ${f(pause.least)} ms (least), ${f(pause.median)} ms (median)`);
  if (state.openResults({ limit: 1 }).length !== 1) throw new Error("state lost its keys");
}
console.log(`checkpoint of ${checkpointMs.slices} slices: written in ${f(checkpointMs.write)} ms CPU (one step), restored in ${f(checkpointMs.restore)} ms CPU (${f(checkpointMs.restore / checkpointMs.slices)} ms per slice)`);
