/**
 * The checks `PUT /v1/dataflows/{id}` adds to a spec's structure: window and aggregates
 * or an operator, the operator and its parameters against the registry, projected
 * fields, and a cost budget for sketch aggregates. Stored specs are not re-checked.
 */
import type { z } from "zod";
import { FieldPathSchema } from "../field-path.ts";
import { issueText } from "../http/describe-issues.ts";
import { findOperator, operatorNames } from "../operators/registry.ts";
import { defaultCapacity } from "../operators/window-aggregate.ts";
import { sourcesOf, type AggregateSpec, type DataflowSpec } from "../wire/dataflow-spec.ts";

/**
 * Sketch (`distinct`/`topk`) updates one record may cost: windows per record × sketch
 * aggregates. An update costs about 1.3 µs, so a 10,000-event batch stays near 0.3 s,
 * well inside the replica call timeout (1 s by default).
 */
const MAX_SKETCH_UPDATES_PER_RECORD = 24;

/**
 * Sketch memory per key, approximately in bytes: windows per record × (Σ 2^precision
 * of `distinct` + Σ 40·capacity of `topk`), all sketches of one key's open windows.
 */
const MAX_SKETCH_BYTES_PER_KEY = 256 * 1024;

/** Approximate checkpoint bytes of one top-k summary entry. */
const TOPK_ENTRY_BYTES = 40;

/** Adds an issue for each rule `spec` breaks (a zod `superRefine` body). */
export function checkSpec(spec: DataflowSpec, ctx: z.RefinementCtx): void {
  checkInput(spec, ctx);
  if (spec.operator) {
    if (spec.window) ctx.addIssue({ code: "custom", path: ["window"], message: "a dataflow with an operator has no window (the operator keeps its own)" });
    if (spec.aggregates) ctx.addIssue({ code: "custom", path: ["aggregates"], message: "a dataflow with an operator has no aggregates" });
    const found = findOperator(spec.operator.name);
    if (!found) {
      ctx.addIssue({ code: "custom", path: ["operator", "name"], message: `no operator named '${spec.operator.name}' (registered: ${operatorNames().join(", ")})` });
    } else {
      const parsed = found.params.safeParse(spec.operator.params);
      if (!parsed.success) {
        for (const issue of parsed.error.issues) {
          ctx.addIssue({ code: "custom", path: ["operator", "params", ...issue.path.map(String)], message: issueText(issue, spec.operator.params) });
        }
      }
    }
  } else if (spec.join) {
    checkJoin(spec, ctx);
  } else {
    if (!spec.window) ctx.addIssue({ code: "custom", path: ["window"], message: "window is required (or an operator)" });
    if (!spec.aggregates) ctx.addIssue({ code: "custom", path: ["aggregates"], message: "aggregates are required (or an operator)" });
  }
  for (const { path, field } of fieldUses(spec)) {
    // Operator parameters follow the operator's own schema; the path rule (checked in the structure elsewhere) applies to them too.
    if (path[0] === "operator" && !FieldPathSchema.safeParse(field).success) ctx.addIssue({ code: "custom", path, message: `'${field}' is not a field name or dotted path such as flow.src.ip (no empty names)` });
    else if (spec.project && !Object.hasOwn(spec.project, field)) ctx.addIssue({ code: "custom", path, message: `'${field}' is not a field of project` });
  }
  checkSketchBudget(spec, ctx);
}

/**
 * A dataflow reads a stream or, as a stage, other dataflows' results (issue 27). A stage's
 * clock is its upstreams' progress (their watermarks), so it takes no clock ticks of its own.
 */
function checkInput(spec: DataflowSpec, ctx: z.RefinementCtx): void {
  if (spec.stream === undefined && spec.from === undefined) ctx.addIssue({ code: "custom", path: ["stream"], message: "name the stream to read, or `from`: the dataflow(s) whose results to read" });
  if (spec.from === undefined) return;
  if (spec.stream !== undefined) ctx.addIssue({ code: "custom", path: ["from"], message: "a dataflow reads a stream or other dataflows' results (from), not both" });
  if (spec.idleAdvanceMs !== undefined) ctx.addIssue({ code: "custom", path: ["idleAdvanceMs"], message: "a stage's clock is its upstreams' progress (set idleAdvanceMs on the first stage): remove it here" });
}

/** A windowed join (issue 27): of exactly two dataflows, over a window, each value named once. */
function checkJoin(spec: DataflowSpec, ctx: z.RefinementCtx): void {
  const join = spec.join;
  if (!join) return;
  if (spec.aggregates) ctx.addIssue({ code: "custom", path: ["aggregates"], message: "a join has its aggregates in join.left and join.right, not aggregates" });
  if (!spec.window) ctx.addIssue({ code: "custom", path: ["window"], message: "a join needs a window: results of both sides join per key and window" });
  if (sourcesOf(spec).length !== 2) ctx.addIssue({ code: "custom", path: ["from"], message: "a join reads exactly two different dataflows: from: [left, right]" });
  for (const name of Object.keys(join.right)) {
    if (Object.hasOwn(join.left, name)) ctx.addIssue({ code: "custom", path: ["join", "right", name], message: `'${name}' is also an aggregate of join.left: each value of a joined result needs its own name` });
  }
}

/** Refuses sketch aggregates whose per-record work or per-key memory would stall or swamp a replica. */
function checkSketchBudget(spec: DataflowSpec, ctx: z.RefinementCtx): void {
  const window = spec.window;
  if (!window || !spec.aggregates) return;
  const windowsPerRecord = window.kind === "sliding" ? window.sizeMs / window.slideMs : 1;
  let sketches = 0;
  let bytes = 0;
  for (const agg of Object.values(spec.aggregates)) {
    if (agg.op === "distinct") bytes += 2 ** agg.precision;
    else if (agg.op === "topk") bytes += TOPK_ENTRY_BYTES * (agg.capacity ?? defaultCapacity(agg.k));
    else continue;
    sketches += 1;
  }
  if (sketches * windowsPerRecord > MAX_SKETCH_UPDATES_PER_RECORD) {
    ctx.addIssue({
      code: "custom",
      path: ["aggregates"],
      message: `${sketches} distinct/topk aggregate(s) × ${windowsPerRecord} windows per event is over ${MAX_SKETCH_UPDATES_PER_RECORD} sketch updates per event: use fewer sketches or a larger slideMs`,
    });
  }
  if (bytes * windowsPerRecord > MAX_SKETCH_BYTES_PER_KEY) {
    ctx.addIssue({
      code: "custom",
      path: ["aggregates"],
      message: `distinct/topk sketches would take about ${Math.round((bytes * windowsPerRecord) / 1024)} KiB per key (over ${MAX_SKETCH_BYTES_PER_KEY / 1024}): lower precision or capacity, or use a larger slideMs`,
    });
  }
}

/** What a spec needs of a field: a key, an event time, a number, or a string (or number). */
type FieldNeed = "key" | "time" | "number" | "string";

/** One place a spec reads a field (after projection): where the spec names it and what it needs. */
export interface FieldUse {
  path: (string | number)[];
  field: string;
  need: FieldNeed;
}

/**
 * Every field the key, time, aggregates and operator read, with where the spec names it.
 * Operator parameters that fail their schema contribute nothing (that is reported apart).
 */
export function fieldUses(spec: DataflowSpec): FieldUse[] {
  const found: FieldUse[] = [];
  if (typeof spec.key === "string") found.push({ path: ["key"], field: spec.key, need: "key" });
  else spec.key.forEach((field, i) => found.push({ path: ["key", i], field, need: "key" }));
  if (spec.timeField !== undefined) found.push({ path: ["timeField"], field: spec.timeField, need: "time" });
  const named: [string[], Record<string, AggregateSpec> | undefined][] = [
    [["aggregates"], spec.aggregates],
    [["join", "left"], spec.join?.left],
    [["join", "right"], spec.join?.right],
  ];
  for (const [at, aggregates] of named) {
    for (const [name, agg] of Object.entries(aggregates ?? {})) {
      if (agg.op === "count") continue;
      found.push({ path: [...at, name, "field"], field: agg.field, need: agg.op === "distinct" || agg.op === "topk" ? "string" : "number" });
      if (agg.op === "topk" && agg.weight !== undefined) found.push({ path: [...at, name, "weight"], field: agg.weight, need: "number" });
    }
  }
  const registered = spec.operator && findOperator(spec.operator.name);
  const params = registered && spec.operator ? registered.params.safeParse(spec.operator.params) : null;
  if (registered && params?.success) {
    for (const { name, type } of registered.compile(params.data).fields) found.push({ path: ["operator", "params"], field: name, need: type });
  }
  return found;
}
