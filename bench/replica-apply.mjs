// Microbenchmark of one replica's apply path (issue 12, "cheaper per event"), in Node:
// the standby's `replicate` step over log entries whose records are the JSON string the
// log holds, as the P=4 benchmark sends them (8 producers x 100-event batches over 10k
// keys, so at P=4 ~25 records per partition over ~2,500 keys, one tumbling 60 s window, count + sum).
// Prints CPU ns per applied record for the whole step and for its parts: the least of
// `--rounds` interleaved rounds, since other processes share the cores.
// Run: node bench/replica-apply.mjs [--ms 500] [--rounds 5] [--partitions 4] [--cursor] [--only <variant name part>] [--root <dir holding shared/>]
// (--cursor keeps a checkpoint cursor open; --root measures another tree, e.g. an older commit's
// `git archive <commit> shared | tar -x -C <dir>` with `node_modules` linked into `<dir>`).
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { makeBatch, prng } from "./load.mjs";
import { specFor } from "./scenarios.mjs";

// `--heap` measures the heap cost of a large operator state instead (state-heap.mjs, its own options).
if (process.argv.includes("--heap")) {
  await import("./state-heap.mjs");
  process.exit(0);
}

const { values: args } = parseArgs({
  options: { ms: { type: "string", default: "500" }, rounds: { type: "string", default: "5" }, partitions: { type: "string", default: "4" }, cursor: { type: "boolean", default: false }, only: { type: "string" }, root: { type: "string", default: resolve(import.meta.dirname, "..") } },
});
const load = (path) => import(pathToFileURL(resolve(args.root, path)).href);
const { partitionFor } = await load("shared/partitioner.ts");
const { compileDataflow } = await load("shared/operators/compile.ts");
const { applyEntry, emptyReplicaState } = await load("shared/replica/replica-state.ts");
const { replicate } = await load("shared/replica/replica-steps.ts");
// In wire/dataflow-spec.ts before issue 26 moved it: an older tree (--root) still loads.
const { DataflowSpecSchema } = await load("shared/dataflow-checks/dataflow-spec-schema.ts").catch(() => load("shared/wire/dataflow-spec.ts"));
const { ReplicaMetaSchema } = await load("shared/wire/persisted.ts");

const PARTITIONS = Number(args.partitions);
const spec = DataflowSpecSchema.parse(specFor("micro", PARTITIONS, 2));
const random = prng(7);
/** Partition `p`'s sub-batches (10,000 / P keys) of 100-event batches, as the log holds them: JSON of `[key, timeMs, bytes]` records. */
const subBatchesOf = (p) =>
  Array.from({ length: 400 }, () =>
    JSON.stringify(
      makeBatch(random, 100, 10_000, 1_000)
        .filter((e) => partitionFor(e.page, PARTITIONS) === p)
        .map((e) => [e.page, e.ts, e.bytes]),
    ),
  );
const subBatches = subBatchesOf(0);
const parsedBatches = subBatches.map((s) => JSON.parse(s));
const perEntry = parsedBatches.reduce((n, r) => n + r.length, 0) / parsedBatches.length;
const tuning = { dedupWindow: 1024, checkpointEvery: 1_000_000_000 };
const none = () => {};

function standby(partition = 0) {
  const meta = ReplicaMetaSchema.parse({ v: 1, name: `r${partition}`, dataflowId: "df", partition, spec, role: "standby", epoch: 1, hasStandby: false, lsn: 0, appliedLsn: 0, standbyAckLsn: 0, checkpointLsn: 0, outputSeq: 0 });
  const state = emptyReplicaState(meta);
  if (args.cursor) state.operator.cursor(1000);
  return state;
}

/** Each variant: a step applying `entries` log entries (`entries * perEntry` records) per call. */
const variants = {
  "replicate step, 1 entry per call": () => {
    const state = standby();
    let lsn = 0;
    return { entries: 1, step: (i) => replicate(state, { epoch: 1, upToLsn: ++lsn, entries: [{ lsn, producer: `p${i % 8}`, seq: Math.floor(i / 8) + 1, records: subBatches[i % 400] }] }, tuning) };
  },
  "replicate step, 8 entries per call": () => {
    const state = standby();
    let lsn = 0;
    const step = (i) => {
      const entries = Array.from({ length: 8 }, (_, k) => ({ lsn: lsn + k + 1, producer: `p${k}`, seq: i + 1, records: subBatches[(i * 8 + k) % 400] }));
      lsn += 8;
      replicate(state, { epoch: 1, upToLsn: lsn, entries }, tuning);
    };
    return { entries: 8, step };
  },
  "applyEntry (checked parse, process)": () => {
    const state = standby();
    return { entries: 1, step: (i) => applyEntry(state, { lsn: i + 1, producer: "p", seq: i + 1, records: subBatches[i % 400] }, none) };
  },
  // As in the benchmark's isolate: every partition's two replicas take turns, and other work
  // (the router, SQLite, other objects) runs in between: a sweep of 8 MB per round of the
  // replicas, not timed, stands in for it.
  "replicate step, 2P replicas, cold caches": () => {
    const replicas = Array.from({ length: 2 * PARTITIONS }, (_, r) => ({ state: standby(r % PARTITIONS), lsn: 0, batches: subBatchesOf(r % PARTITIONS) }));
    const step = (i) => {
      const r = replicas[i % replicas.length];
      r.lsn += 1;
      const entry = { lsn: r.lsn, producer: `p${i % 8}`, seq: Math.floor(i / replicas.length) + 1, records: r.batches[i % 400] };
      replicate(r.state, { epoch: 1, upToLsn: r.lsn, entries: [entry] }, tuning);
    };
    return { entries: 1, step, sweep: replicas.length };
  },
  "JSON.parse alone": () => ({ entries: 1, step: (i) => JSON.parse(subBatches[i % 400]) }),
  "operator.process of JSON.parse": () => {
    const operator = compileDataflow(spec).bind();
    return { entries: 1, step: (i) => operator.process(JSON.parse(subBatches[i % 400]), none) };
  },
  "operator.process of parsed records": () => {
    const operator = compileDataflow(spec).bind();
    return { entries: 1, step: (i) => operator.process(parsedBatches[i % 400], none) };
  },
};

const other = new Float64Array(1 << 20);

/** CPU ns per record of `step` over `args.ms` ms (without the sweeps of a variant with `sweep`: steps per sweep). */
function measure({ entries, step, sweep }, from) {
  let i = from;
  let micros = 0;
  const started = performance.now();
  while (performance.now() - started < Number(args.ms)) {
    if (sweep) for (let k = 0; k < other.length; k += 8) other[k] += 1;
    const cpu = process.cpuUsage();
    for (let j = 0; j < (sweep ?? 100); j++) step(i++);
    const used = process.cpuUsage(cpu);
    micros += used.user + used.system;
  }
  return { ns: (micros * 1e3) / ((i - from) * entries * perEntry), next: i };
}

console.log(`${args.root}: ${perEntry.toFixed(1)} records per entry; least of ${args.rounds} rounds of ${args.ms} ms${args.cursor ? "; checkpoint cursor open" : ""}`);
const runs = Object.entries(variants).filter(([name]) => !args.only || name.includes(args.only)).map(([name, make]) => ({ name, variant: make(), at: 0, best: Number.POSITIVE_INFINITY }));
for (const run of runs) run.at = measure(run.variant, 0).next;
for (let round = 0; round < Number(args.rounds); round++) {
  for (const run of runs) {
    const { ns, next } = measure(run.variant, run.at);
    run.at = next;
    run.best = Math.min(run.best, ns);
  }
}
for (const run of runs) console.log(`${run.name.padEnd(40)} ${run.best.toFixed(0).padStart(6)} ns/record`);
