/**
 * Field paths mean one thing everywhere (issue 11, defect 1): `a.b` reads the nested field
 * in filters, projections, keys, times, aggregates, top-k weights, custom operators' fields
 * and stream schemas, through `shared/field-path.ts`.
 */
import { describe, expect, it } from "vitest";
import { FieldPathSchema, fieldReader, readField, splitFieldPath } from "../../shared/field-path.ts";
import { routeEvents } from "../../shared/ingest/route-events.ts";
import { compileFilter } from "../../shared/wire/filter.ts";
import { DataflowSpecSchema } from "../../shared/dataflow-checks/dataflow-spec-schema.ts";
import { StoredDataflowSpecSchema } from "../../shared/wire/dataflow-spec.ts";
import { specProblems } from "../../shared/dataflow-checks/stream-schema-fit.ts";
import { eventSchemaOf, StreamSchemaSchema } from "../../shared/wire/stream-schema.ts";
import type { FluxRecord } from "../../shared/wire/window-result.ts";
import { defaultKeyGroupMap } from "../../shared/keygroups/key-groups.ts";

const flowEvent = { flow: { src: "10.0.0.1", dst: "10.0.0.2", bytes: 500, ts: 4000 }, kind: "tcp" };

function records(spec: Record<string, unknown>, events: unknown[]): FluxRecord[] {
  const parsed = DataflowSpecSchema.parse({ stream: "flows", partitions: 1, ...spec });
  return [...routeEvents(parsed, events, 10_000, 256, defaultKeyGroupMap(1)).values()].flat();
}

const windowed = { window: { kind: "tumbling", sizeMs: 1000 }, aggregates: { n: { op: "count" } } };

describe("readField", () => {
  it("reads nested own properties and nothing else", () => {
    expect(readField(flowEvent, splitFieldPath("flow.bytes"))).toBe(500);
    expect(readField(flowEvent, splitFieldPath("kind"))).toBe("tcp");
    expect(readField({ "flow.bytes": 7 }, splitFieldPath("flow.bytes"))).toBeUndefined();
    expect(readField({ a: [{ b: 1 }] }, splitFieldPath("a.0.b"))).toBeUndefined();
    expect(readField({ a: "text" }, splitFieldPath("a.length"))).toBeUndefined();
    expect(readField({}, splitFieldPath("constructor"))).toBeUndefined();
    expect(readField({ a: {} }, splitFieldPath("a.toString"))).toBeUndefined();
    expect(fieldReader("flow.src")(flowEvent)).toBe("10.0.0.1");
    expect(fieldReader("kind")(flowEvent)).toBe("tcp");
    expect(fieldReader("kind")(null)).toBeUndefined();
  });

  it("accepts names and dotted paths, refuses empty names", () => {
    expect(FieldPathSchema.safeParse("flow.src.ip").success).toBe(true);
    for (const bad of ["", ".a", "a.", "a..b", "x".repeat(257)]) expect(FieldPathSchema.safeParse(bad).success, bad).toBe(false);
  });
});

describe("a dotted field path", () => {
  it("in a filter reads the nested field (it used to read a property named 'flow.bytes')", () => {
    const filter = { field: "flow.bytes", op: "gt", value: 100 } as const;
    expect(compileFilter(filter)(flowEvent)).toBe(true);
    expect(compileFilter(filter)({ flow: { bytes: 50 } })).toBe(false);
    expect(records({ key: "kind", filter, ...windowed }, [flowEvent, { kind: "udp", flow: { bytes: 5 } }])).toEqual([["tcp", 10_000]]);
  });

  it("as a key, a time field, an aggregate field and a top-k weight reads the nested fields", () => {
    const spec = {
      key: "flow.src",
      timeField: "flow.ts",
      window: { kind: "tumbling", sizeMs: 1000 },
      aggregates: { bytes: { op: "sum", field: "flow.bytes" }, top: { op: "topk", field: "flow.dst", k: 1, weight: "flow.bytes" } },
    };
    expect(records(spec, [flowEvent])).toEqual([["10.0.0.1", 4000, 500, "10.0.0.2"]]);
  });

  it("as a key of several fields reads each nested field", () => {
    expect(records({ key: ["flow.src", "kind"], ...windowed }, [flowEvent])).toEqual([['["10.0.0.1","tcp"]', 10_000]]);
  });

  it("in a projection reads the nested field into a plain output name", () => {
    expect(records({ project: { src: "flow.src", b: "flow.bytes" }, key: "src", aggregates: { b: { op: "sum", field: "b" } }, window: windowed.window }, [flowEvent])).toEqual([["10.0.0.1", 10_000, 500]]);
    const dotted = DataflowSpecSchema.safeParse({ stream: "s", project: { "a.b": "x" }, key: "a.b", ...windowed });
    expect(dotted.success).toBe(false);
  });

  it("as a custom operator's field reads the nested field", () => {
    const operator = { name: "heavy-hitters", params: { bytesField: "flow.bytes", destinationField: "flow.dst", minBytes: 1 } };
    expect(records({ key: "flow.src", timeField: "flow.ts", operator }, [flowEvent])).toEqual([["10.0.0.1", 4000, 500, "10.0.0.2"]]);
  });

  it("in a stream schema declares the same nested field that specs read", () => {
    const schema = StreamSchemaSchema.parse({ fields: { "flow.src": { type: "string" }, "flow.bytes": { type: "integer" }, "flow.ts": { type: "time" } } });
    const events = eventSchemaOf(schema);
    expect(events.safeParse(flowEvent).success).toBe(true);
    expect(events.safeParse({ "flow.src": "x", "flow.bytes": 1, "flow.ts": 1 }).success).toBe(false);
    const spec = DataflowSpecSchema.parse({ stream: "flows", key: "flow.src", timeField: "flow.ts", window: windowed.window, aggregates: { b: { op: "sum", field: "flow.bytes" } }, filter: { field: "flow.bytes", op: "gt", value: 1 } });
    expect(specProblems(schema, spec)).toEqual([]);
    expect(records(spec, [flowEvent])).toEqual([["10.0.0.1", 4000, 500]]);
  });
});

describe("path rules and stored specs", () => {
  it("refuses malformed paths in new specs, operator parameters included", () => {
    const operator = { name: "heavy-hitters", params: { bytesField: "flow..bytes", minBytes: 1 } };
    const refused = DataflowSpecSchema.safeParse({ stream: "s", key: "src", operator });
    expect(refused.error?.issues.map((i) => i.path.join("."))).toEqual(["operator.params"]);
    expect(DataflowSpecSchema.safeParse({ stream: "s", key: "a..b", ...windowed }).success).toBe(false);
    expect(DataflowSpecSchema.safeParse({ stream: "s", key: "k", filter: { field: ".a", op: "eq", value: 1 }, ...windowed }).success).toBe(false);
  });

  it("still loads a stored spec with names accepted before paths were checked", () => {
    const legacy = { stream: "s", key: "a..b", project: { "a..b": "x", "k.v": "y" }, filter: { field: "x.", op: "eq", value: 1 }, ...windowed };
    expect(StoredDataflowSpecSchema.safeParse(legacy).success).toBe(true);
    expect(DataflowSpecSchema.safeParse(legacy).success).toBe(false);
    // Projected output fields are names, read whole: such a stored dataflow routes as before.
    const stored = StoredDataflowSpecSchema.parse({ stream: "s", key: "k.v", project: { "k.v": "flow.src" }, partitions: 1, ...windowed });
    expect([...routeEvents(stored, [flowEvent], 10_000, 256, defaultKeyGroupMap(1)).values()].flat()).toEqual([["10.0.0.1", 10_000]]);
  });
});
