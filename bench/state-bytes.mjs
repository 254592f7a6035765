// State memory per key (issue 30): for each kind of keyed aggregate, a live operator (one
// tumbling window) holding `--keys` keys of 15 characters, fed one record per key as a
// replica's apply does, and the bytes it holds after full collections: on the V8 heap and
// in array buffers beside it (typed arrays' contents), divided by the keys. `distinct` and
// `topk` see one value per key (a sparse sketch, a summary of one entry): their cost grows
// with the values a key sees, up to 2^precision bytes per HyperLogLog.
// Run: npm run bench:state -- [--keys 1000000] [--sketch-keys 100000] [--json]
import { parseArgs } from "node:util";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { compileDataflow } from "../shared/operators/compile.ts";
import { DataflowSpecSchema } from "../shared/dataflow-checks/dataflow-spec-schema.ts";

const { values: args } = parseArgs({ options: { keys: { type: "string", default: "1000000" }, "sketch-keys": { type: "string", default: "100000" }, json: { type: "boolean", default: false } } });
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");

/** The kinds measured: a name, its aggregates, and whether it holds sketches (measured over fewer keys). */
const KINDS = [
  { name: "count", aggregates: { n: { op: "count" } } },
  { name: "sum", aggregates: { s: { op: "sum", field: "bytes" } } },
  { name: "min", aggregates: { lo: { op: "min", field: "bytes" } } },
  { name: "max", aggregates: { hi: { op: "max", field: "bytes" } } },
  { name: "avg", aggregates: { mean: { op: "avg", field: "bytes" } } },
  { name: "count + sum (the bench's)", aggregates: { n: { op: "count" }, s: { op: "sum", field: "bytes" } } },
  { name: "count + sum + min + max (issue 30's target)", aggregates: { n: { op: "count" }, s: { op: "sum", field: "bytes" }, lo: { op: "min", field: "bytes" }, hi: { op: "max", field: "bytes" } } },
  { name: "distinct (precision 12), one value per key", aggregates: { d: { op: "distinct", field: "user" } }, sketch: true },
  { name: "topk (k 10), one value per key", aggregates: { t: { op: "topk", field: "user", k: 10 } }, sketch: true },
];

/** A 15-character key for `k` (issue 30: keys of 10 to 20 characters). */
const keyOf = (k) => `key-${String(k).padStart(11, "0")}`;

function bytesNow() {
  gc();
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return { heap: heapUsed, buffers: arrayBuffers };
}

/** Bytes per key one kind's state holds. */
function measure(kind, keys) {
  const spec = DataflowSpecSchema.parse({ stream: "heap", key: "page", timeField: "ts", window: { kind: "tumbling", sizeMs: 60_000 }, aggregates: kind.aggregates, partitions: 1 });
  const compiled = compileDataflow(spec);
  const before = bytesNow();
  const live = compiled.bind();
  for (let from = 0; from < keys; from += 2_000) {
    const records = [];
    for (let k = from; k < Math.min(keys, from + 2_000); k++) records.push([keyOf(k), 1_000, ...compiled.fields.map((f) => (f === "user" ? `u${k % 977}` : k % 1_500))]);
    // As the log hands them over: parsed from JSON, so keys are fresh strings as in a replica.
    live.process(JSON.parse(JSON.stringify(records)), () => {});
  }
  const after = bytesNow();
  if (live.openResults({ limit: 1 }).length !== 1) throw new Error(`${kind.name}: state lost its keys`);
  const heap = (after.heap - before.heap) / keys;
  const buffers = (after.buffers - before.buffers) / keys;
  return { kind: kind.name, keys, heapBytesPerKey: heap, bufferBytesPerKey: buffers, bytesPerKey: heap + buffers, live };
}

const rows = [];
for (const kind of KINDS) {
  const { live: _live, ...row } = measure(kind, Number(kind.sketch ? args["sketch-keys"] : args.keys));
  rows.push(row);
  if (!args.json) console.log(`${row.kind.padEnd(46)} ${row.keys} keys: ${row.bytesPerKey.toFixed(1)} B per key (heap ${row.heapBytesPerKey.toFixed(1)} + array buffers ${row.bufferBytesPerKey.toFixed(1)})`);
}
if (args.json) console.log(JSON.stringify({ node: process.version, keyChars: keyOf(0).length, rows }));
