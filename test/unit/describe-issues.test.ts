/** Validation messages for people (issue 11): each names the field and what was expected, never zod's own wording. */
import { describe, expect, it } from "vitest";
import { describeIssues } from "../../shared/http/describe-issues.ts";
import { DataflowSpecSchema } from "../../shared/dataflow-checks/dataflow-spec-schema.ts";
import { StreamSchemaSchema } from "../../shared/wire/stream-schema.ts";

const base = { stream: "s", key: "k", window: { kind: "tumbling", sizeMs: 1000 }, aggregates: { n: { op: "count" } } };

function messagesFor(input: unknown, schema: { safeParse(v: unknown): { error?: { issues: Parameters<typeof describeIssues>[0] } } } = DataflowSpecSchema): string[] {
  return describeIssues(schema.safeParse(input).error?.issues ?? [], input);
}

describe("describeIssues", () => {
  it.each<[string, unknown, string[]]>([
    ["a fraction where an integer is needed", { ...base, window: { kind: "tumbling", sizeMs: 1.5 } }, ["window.sizeMs: must be an integer, got 1.5"]],
    ["a number out of range", { ...base, partitions: 100 }, ["partitions: must be at most 64, got 100"]],
    ["an unknown window kind", { ...base, window: { kind: "tumblin", sizeMs: 1 } }, ['window.kind: must be "tumbling" or "sliding", got "tumblin"']],
    ["an unknown aggregate", { ...base, aggregates: { n: { op: "cnt" } } }, ['aggregates.n.op: must be one of "count", "sum", "min", "max", "avg", "distinct", "topk", got "cnt"']],
    ["a missing field", { stream: "s", window: base.window, aggregates: base.aggregates }, ["key: must be a string or an array (missing)"]],
    ["a key of the wrong type", { ...base, key: 3 }, ["key: must be a string or an array, got 3"]],
    ["a bad literal", { ...base, replication: 3 }, ["replication: must be 1 or 2, got 3"]],
    ["an unknown field", { ...base, colour: "red" }, ["(body): unknown field 'colour'"]],
    ["a bad aggregate name", { ...base, aggregates: { "b c": { op: "count" } } }, [`aggregates: the name "b c" is not allowed: use letters, digits, '_', '-' or '.', starting with a letter, digit or '_' but not '__' (at most 64)`]],
    ["a body that is not an object", "text", ['(body): must be an object, got "text"']],
    ["a bad operator parameter", { stream: "s", key: "k", operator: { name: "heavy-hitters", params: { windowMs: 1.5, minBytes: 1 } } }, ["operator.params.windowMs: must be an integer, got 1.5"]],
    ["a string too long", { ...base, stream: "s".repeat(65) }, ["stream: must be at most 64 characters long"]],
    ["too few entries", { ...base, key: [] }, ["key: must have at least 1 entry"]],
    ["a key list too long", { ...base, key: ["a", "b", "c", "d", "e", "f", "g", "h", "i"] }, ["key: matches none of the allowed forms; the closest: key: must have at most 8 entries"]],
    ["a filter that is not an object (its forms are all objects: said once)", { ...base, filter: [] }, ["filter: must be an object, got an array"]],
    ["a filter in no allowed form", { ...base, filter: { field: "a", op: "zz", value: 1 } }, ['filter: matches none of the allowed forms; the closest: filter.op: must be one of "eq", "ne", "lt", "le", "gt", "ge", got "zz"']],
    ["a number too large for a double (1e400 parses to Infinity)", { ...base, window: { kind: "tumbling", sizeMs: Number.POSITIVE_INFINITY } }, ["window.sizeMs: must be a finite number, got Infinity"]],
    ["a number too large where a string is needed", { ...base, stream: Number.POSITIVE_INFINITY }, ["stream: must be a string, got Infinity"]],
  ])("describes %s", (_what, input, expected) => {
    expect(messagesFor(input)).toEqual(expected);
  });

  it("calls a missing record an object, as a person would", () => {
    expect(messagesFor({ additionalFields: false }, StreamSchemaSchema)).toEqual(["fields: must be an object (missing)"]);
  });

  it("names no root for a query string (an empty root)", () => {
    const issues = DataflowSpecSchema.safeParse({ ...base, colour: "red" }).error?.issues ?? [];
    expect(describeIssues(issues, {}, [], "")).toEqual(["unknown field 'colour'"]);
  });

  it("keeps messages our schemas wrote", () => {
    expect(messagesFor({ ...base, aggregates: {} })).toEqual(["aggregates: at least one aggregate"]);
    expect(messagesFor({ fields: { "a..b": { type: "string" } } }, StreamSchemaSchema)).toEqual([
      'fields: the name "a..b" is not allowed: a field name or dotted path such as flow.src.ip (no empty names)',
    ]);
  });

  it("never passes zod's default wording through", () => {
    const inputs = [{ ...base, window: null }, { ...base, aggregates: { n: { op: "topk", field: "x", k: 0 } } }, { ...base, key: ["a", 1] }, { fields: { a: { type: "text" } } }];
    for (const input of inputs) {
      const messages = [...messagesFor(input), ...messagesFor(input, StreamSchemaSchema)];
      for (const m of messages) expect(m).not.toMatch(/Invalid input|expected int, received|Too (small|big)/);
    }
  });
});
