/** Shared test fixtures: a spec, dataflow records and compact records. */
import { planDataflow } from "../../shared/plan-dataflow.ts";
import { DataflowSpecSchema } from "../../shared/dataflow-checks/dataflow-spec-schema.ts";
import type { DataflowSpec } from "../../shared/wire/dataflow-spec.ts";
import type { DataflowRecord } from "../../shared/wire/routing.ts";

/** A parsed spec (defaults applied) with overrides. */
export function spec(overrides: Record<string, unknown> = {}): DataflowSpec {
  return DataflowSpecSchema.parse({
    stream: "clicks",
    key: "page",
    timeField: "ts",
    window: { kind: "tumbling", sizeMs: 1000, allowedLatenessMs: 1_000_000 },
    aggregates: { n: { op: "count" }, bytes: { op: "sum", field: "bytes" }, lo: { op: "min", field: "bytes" }, hi: { op: "max", field: "bytes" }, mean: { op: "avg", field: "bytes" } },
    partitions: 2,
    replication: 2,
    ...overrides,
  });
}

/** A ready record for `spec`, as the coordinator would store it. */
export function record(id: string, s: DataflowSpec = spec()): DataflowRecord {
  return { ...planDataflow(id, s, 0), ready: true };
}
