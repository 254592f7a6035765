// The operator's part of a close of one large window, step by step, in Node (issue 12):
// the window-aggregate (count, sum, avg) fills `keys` keys in random order into one window
// in 20,000-record batches, then one record past its end closes it, at most `limit`
// results per call, and empty calls (the replica's close entries) go on until it is done.
// Prints the longest fill batch, the first and the longest close step, the median step and
// the whole close, ms. `--root <dir>` measures another tree holding `shared/` (e.g. `git
// archive main shared | tar -x -C <dir>`, `node_modules` linked in; a tree before issue 12
// ignores the limit and closes in one call).
// Run: npm run bench:close -- --steps [keys=1000000] [limit=5000] [--root <dir>]
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const args = process.argv.slice(2).filter((a) => a !== "--steps");
const rootAt = args.indexOf("--root");
const root = rootAt >= 0 ? args.splice(rootAt, 2)[1] : ".";
const keys = Number(args[0] ?? 1_000_000);
const limit = Number(args[1] ?? 5_000);
const load = (path) => import(pathToFileURL(resolve(root, path)).href);
const { compileDataflow } = await load("shared/operators/compile.ts");
// In wire/dataflow-spec.ts before issue 26 moved it: an older tree (--root) still loads.
const { DataflowSpecSchema } = await load("shared/dataflow-checks/dataflow-spec-schema.ts").catch(() => load("shared/wire/dataflow-spec.ts"));

const spec = DataflowSpecSchema.parse({
  stream: "s", key: "page", timeField: "ts", partitions: 1,
  window: { kind: "tumbling", sizeMs: 60_000, allowedLatenessMs: 0 },
  aggregates: { n: { op: "count" }, bytes: { op: "sum", field: "bytes" }, mean: { op: "avg", field: "bytes" } },
});
const live = compileDataflow(spec).bind();
// A fixed shuffle (xorshift), so every run fills the same order.
let x = 2463534242;
const random = () => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), (x >>> 0) / 2 ** 32);
const order = Array.from({ length: keys }, (_, i) => i);
for (let i = order.length - 1; i > 0; i--) {
  const j = Math.floor(random() * (i + 1));
  [order[i], order[j]] = [order[j], order[i]];
}
let longestFillMs = 0;
for (let from = 0; from < keys; from += 20_000) {
  const startedAt = performance.now();
  live.process(order.slice(from, from + 20_000).map((i) => [`k${i}`, 1_000, 1]), () => {}, limit);
  longestFillMs = Math.max(longestFillMs, performance.now() - startedAt);
}
let emitted = 0;
const steps = [];
const step = (records) => {
  const startedAt = performance.now();
  live.process(records, () => void emitted++, limit);
  steps.push(performance.now() - startedAt);
};
step([["k0", 61_000, 1]]);
while (live.closing?.() === true) step([]);
const sorted = [...steps].sort((a, b) => a - b);
const ms = (v) => Math.round(v);
console.log(JSON.stringify({ root, keys, limit, emitted, steps: steps.length, longestFillMs: ms(longestFillMs), firstStepMs: ms(steps[0]), longestStepMs: ms(sorted.at(-1)), medianStepMs: ms(sorted[sorted.length >> 1]), wholeCloseMs: ms(steps.reduce((a, b) => a + b, 0)) }));
