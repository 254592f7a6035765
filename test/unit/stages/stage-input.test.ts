/** A stage's checks at creation (issue 27): what it names in `from`, and the fields it reads against what its upstreams' results carry. */
import { describe, expect, it } from "vitest";
import { DataflowSpecSchema } from "../../../shared/dataflow-checks/dataflow-spec-schema.ts";
import { stageProblems, type UpstreamView } from "../../../shared/dataflow-checks/stage-input.ts";
import type { DataflowSpec } from "../../../shared/wire/dataflow-spec.ts";

const WINDOW = { kind: "tumbling", sizeMs: 60_000 };

/** A dataflow over the stream `clicks`, keyed by `page`, with these aggregates. */
const upstream = (aggregates: Record<string, unknown>, deleting = false): UpstreamView => ({
  spec: DataflowSpecSchema.parse({ stream: "clicks", key: "page", window: WINDOW, aggregates }),
  deleting,
});

const UPSTREAMS: Record<string, UpstreamView> = {
  counts: upstream({ n: { op: "count" }, bytes: { op: "sum", field: "b" }, top: { op: "topk", field: "user", k: 3 } }),
  errors: upstream({ n: { op: "count" }, top: { op: "sum", field: "b" } }),
  dying: upstream({ n: { op: "count" } }, true),
  hitters: { spec: { key: "page", operator: { name: "heavy-hitters", params: {} } }, deleting: false },
};
const lookup = (name: string): UpstreamView | null => UPSTREAMS[name] ?? null;

/** A stage spec reading `from` (window and key `key` unless given). */
const stage = (fields: Record<string, unknown>): DataflowSpec => DataflowSpecSchema.parse({ key: "key", window: WINDOW, ...fields });
const sum = (field: string) => ({ op: "sum", field });

/** The problems of stage `d` with this spec, reading what its `from` names. */
function problemsOf(fields: Record<string, unknown>, id = "d") {
  const spec = stage(fields);
  const from = fields.from;
  return stageProblems(id, spec, typeof from === "string" ? [from] : (from as string[]), lookup);
}

describe("stageProblems: what from names", () => {
  it("refuses an upstream that does not exist", () => {
    expect(problemsOf({ from: "nope", aggregates: { n: { op: "count" } } })).toEqual([{ path: ["from"], message: "no dataflow 'nope': create the upstream first" }]);
  });

  it("refuses a dataflow reading its own results", () => {
    expect(problemsOf({ from: "d", aggregates: { n: { op: "count" } } }, "d")).toEqual([{ path: ["from"], message: "a dataflow cannot read its own results" }]);
  });

  it("refuses an upstream being deleted", () => {
    expect(problemsOf({ from: "dying", aggregates: { n: { op: "count" } } })).toEqual([{ path: ["from"], message: "dataflow 'dying' is being deleted" }]);
  });

  it("names every bad entry of from, and checks no field until from is right", () => {
    expect(problemsOf({ from: ["nope", "counts", "dying"], aggregates: { s: sum("values.missing") } })).toEqual([
      { path: ["from"], message: "no dataflow 'nope': create the upstream first" },
      { path: ["from"], message: "dataflow 'dying' is being deleted" },
    ]);
  });

  it("accepts a stage reading fields its upstream's results carry", () => {
    expect(problemsOf({ from: "counts", aggregates: { total: sum("values.n"), bytes: sum("values.bytes"), pages: { op: "count" } } })).toEqual([]);
  });
});

describe("stageProblems: fields the results carry", () => {
  it("refuses a value the upstream does not compute, listing the fields its results carry", () => {
    expect(problemsOf({ from: "counts", aggregates: { s: sum("values.x") } })).toEqual([
      {
        path: ["aggregates", "s", "field"],
        message: "the results of dataflow 'counts' carry no field 'values.x' (they carry key, windowStartMs, windowEndMs, group.page, values.n, values.bytes, values.top)",
      },
    ]);
  });

  it("refuses a key or filter field the results do not carry", () => {
    const problems = problemsOf({ from: "counts", key: "host", filter: { field: "values.p95", op: "gt", value: 1 }, aggregates: { n: { op: "count" } } });
    expect(problems.map((p) => [p.path, p.message.split(" (")[0]])).toEqual([
      [["key"], "the results of dataflow 'counts' carry no field 'host'"],
      [["filter"], "the results of dataflow 'counts' carry no field 'values.p95'"],
    ]);
  });

  it("refuses a value of the wrong type (a topk list summed)", () => {
    expect(problemsOf({ from: "counts", aggregates: { s: sum("values.top") } })).toEqual([
      { path: ["aggregates", "s", "field"], message: "'values.top' is declared as array; this use needs number or integer" },
    ]);
  });

  it("in a union, carries only the values every upstream computes with the same type", () => {
    const problems = problemsOf({ from: ["counts", "errors"], aggregates: { n: sum("values.n"), b: sum("values.bytes"), t: sum("values.top") } });
    const carried = "(they carry key, windowStartMs, windowEndMs, group.page, values.n)";
    expect(problems).toEqual([
      { path: ["aggregates", "b", "field"], message: `the results of dataflows 'counts', 'errors' carry no field 'values.bytes' ${carried}` },
      { path: ["aggregates", "t", "field"], message: `the results of dataflows 'counts', 'errors' carry no field 'values.top' ${carried}` },
    ]);
  });

  it("leaves values open after a custom-operator upstream, alone or in a union", () => {
    expect(problemsOf({ from: "hitters", aggregates: { s: sum("values.anything") } })).toEqual([]);
    expect(problemsOf({ from: ["counts", "hitters"], aggregates: { s: sum("values.anything") } })).toEqual([]);
  });

  it("still checks the fields outside values after a custom-operator upstream", () => {
    expect(problemsOf({ from: "hitters", key: "host", aggregates: { n: { op: "count" } } }).map((p) => p.path)).toEqual([["key"]]);
  });
});

describe("stageProblems: a join", () => {
  const L = upstream({ x: sum("b") });
  const R = upstream({ y: sum("b") });
  const joinLookup = (name: string): UpstreamView | null => ({ l: L, r: R })[name as "l" | "r"] ?? null;
  const join = (left: string, right: string, key = "key") =>
    stageProblems("j", stage({ from: ["l", "r"], key, join: { left: { a: sum(left) }, right: { b: sum(right) } } }), ["l", "r"], joinLookup);

  it("accepts each side reading what its own upstream carries", () => {
    expect(join("values.x", "values.y")).toEqual([]);
  });

  it("checks the left side against the first upstream and the right against the second, under join.left and join.right", () => {
    expect(join("values.y", "values.x")).toEqual([
      {
        path: ["join", "left", "a", "field"],
        message: "the results of dataflow 'l' carry no field 'values.y' (they carry key, windowStartMs, windowEndMs, group.page, values.x)",
      },
      {
        path: ["join", "right", "b", "field"],
        message: "the results of dataflow 'r' carry no field 'values.x' (they carry key, windowStartMs, windowEndMs, group.page, values.y)",
      },
    ]);
  });

  it("checks the key against both upstreams", () => {
    const problems = join("values.x", "values.y", "values.y");
    expect(problems.map((p) => [p.path, p.message.split(" (")[0]])).toEqual([[["key"], "the results of dataflow 'l' carry no field 'values.y'"]]);
  });
});
