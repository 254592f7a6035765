/**
 * The dataflows of a simulated run (issue 27): one fed by the producers' stream, and for
 * the pipeline workloads the stages reading it — two stages in a row, or a fan-out into
 * two stages that a third reads as a union. Each keeps its durable record as its own monitor
 * (issue 29) last saved it, that monitor's state, and a cursor reader per partition.
 */
import { DataflowSpecSchema } from "../../shared/dataflow-checks/dataflow-spec-schema.ts";
import { planDataflow } from "../../shared/plan-dataflow.ts";
import type { DataflowSpec } from "../../shared/wire/dataflow-spec.ts";
import { DataflowRecordSchema, type DataflowRecord } from "../../shared/wire/routing.ts";
import { CursorReader } from "./sim-checks.ts";
import { SimMonitor } from "./sim-monitors.ts";
import type { Violations } from "./violations.ts";

export const WORKLOADS = ["window", "heavy-hitters", "ticks", "pipeline2", "pipeline3", "join", "moves"] as const;
export type Workload = (typeof WORKLOADS)[number];

/** Whether the workload runs stages (dataflows reading other dataflows' results). */
export function hasStages(workload: Workload): boolean {
  return workload === "pipeline2" || workload === "pipeline3" || workload === "join";
}

/**
 * The first dataflow of each workload; every one reports each record once (`n`, or `packets` per source).
 * `latenessMs`: the moves workload's allowed lateness (none, some, or more than any run lasts).
 */
function firstSpec(workload: Workload, partitions: number, latenessMs: number): unknown {
  const base = { stream: "s", key: "k", timeField: "ts", partitions };
  const window = { window: { kind: "tumbling", sizeMs: 100 }, aggregates: { n: { op: "count" }, v: { op: "sum", field: "v" } } };
  if (workload === "window") return { ...base, ...window };
  if (workload === "moves") return { ...base, ...window, window: { ...window.window, allowedLatenessMs: latenessMs } };
  // Stages need a watermark from every partition of the first one: clock ticks give it one even while idle.
  if (workload === "ticks" || hasStages(workload)) return { ...base, ...window, idleAdvanceMs: 0 };
  // Every source that sent anything alerts (one destination suffices), so `packets` counts every record.
  return { ...base, operator: { name: "heavy-hitters", params: { windowMs: 100, bytesField: "v", destinationField: "k", minDestinations: 1 } } };
}

/** A stage summing its upstream's counts per key (as the upstream keys) over a longer window. */
const sumsSpec = (from: string | string[], key: string, sizeMs: number, partitions: number) => ({
  from,
  key,
  partitions,
  window: { kind: "tumbling", sizeMs },
  aggregates: { n: { op: "sum", field: "values.n" }, v: { op: "sum", field: "values.v" }, c: { op: "count" }, hi: { op: "max", field: "values.v" } },
});

/** A windowed join of the first dataflow's results with a stage's over them (a diamond: both read, one directly). */
const joinSpec = (kind: "inner" | "left", partitions: number) => ({
  from: ["df", "df2"],
  key: "key",
  partitions,
  window: { kind: "tumbling", sizeMs: 400 },
  join: { kind, left: { n: { op: "sum", field: "values.n" }, c: { op: "count" } }, right: { n2: { op: "sum", field: "values.n" }, hi: { op: "max", field: "values.hi" } } },
});

/** The specs of a workload's dataflows, the first fed by the stream; `int(n)` draws from the seed. */
export function workloadSpecs(workload: Workload, int: (n: number) => number): { id: string; spec: DataflowSpec }[] {
  const parse = (spec: unknown) => DataflowSpecSchema.parse(spec);
  // Moves need two partitions or more (issue 28), and late records are judged per partition: some seeds let none be late.
  const moves = workload === "moves";
  const specs = [{ id: "df", spec: parse(firstSpec(workload, moves ? 2 + int(2) : 1 + int(3), moves ? ([0, 50, 600_000][int(3)] ?? 0) : 0)) }];
  if (workload === "pipeline2" || workload === "join") specs.push({ id: "df2", spec: parse(sumsSpec("df", "key", 200, 1 + int(3))) });
  if (workload === "join") specs.push({ id: "dfj", spec: parse(joinSpec(int(2) === 0 ? "inner" : "left", 1 + int(3))) });
  if (workload === "pipeline3") {
    // Fan-out: two stages read df, one re-keyed by its counts; a third reads both (a union).
    specs.push({ id: "df2", spec: parse(sumsSpec("df", "key", 200, 1 + int(3))) });
    specs.push({ id: "df2b", spec: parse(sumsSpec("df", "values.n", 100, 1 + int(3))) });
    specs.push({ id: "df3", spec: parse(sumsSpec(["df2", "df2b"], "values.c", 400, 1 + int(3))) });
  }
  return specs;
}

export class SimDataflow {
  readonly id: string;
  readonly spec: DataflowSpec;
  /** The durable record as JSON: what its monitor saved last. */
  stored: string;
  /** Its monitor object (issue 29): up, slow or restarting independently of the others. */
  readonly monitor = new SimMonitor();
  storedHealth = "{}";
  readonly readers: CursorReader[];
  #parsed: { json: string; record: DataflowRecord } | null = null;

  constructor(id: string, spec: DataflowSpec, readers: string[], violations: Violations) {
    this.id = id;
    this.spec = spec;
    this.stored = JSON.stringify({ ...planDataflow(id, spec, 0), ready: true, readers });
    this.readers = this.record().routes.map((r) => new CursorReader(`${id} partition ${r.partition}`, violations));
  }

  /** The stored record (read-only: it is shared until the next save). */
  record(): DataflowRecord {
    if (this.#parsed?.json !== this.stored) this.#parsed = { json: this.stored, record: DataflowRecordSchema.parse(JSON.parse(this.stored)) };
    return this.#parsed.record;
  }
}
