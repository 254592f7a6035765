/** Dataflow filters: the schema's limits and the evaluation rules, and routing that drops filtered events. */
import { describe, expect, it } from "vitest";
import { routeEvents } from "../../shared/ingest/route-events.ts";
import { compileFilter, FilterSchema, type FilterExpr } from "../../shared/wire/filter.ts";
import { spec } from "../helpers/fixtures.ts";
import { defaultKeyGroupMap } from "../../shared/keygroups/key-groups.ts";

const event = { page: "home", bytes: 512, country: "ch", bot: false, ratio: 0.5 };

describe("compileFilter", () => {
  it.each<[FilterExpr, boolean]>([
    [{ field: "page", op: "eq", value: "home" }, true],
    [{ field: "page", op: "ne", value: "home" }, false],
    [{ field: "bytes", op: "gt", value: 500 }, true],
    [{ field: "bytes", op: "le", value: 500 }, false],
    [{ field: "page", op: "lt", value: "z" }, true],
    [{ field: "bytes", op: "lt", value: "9" }, false],
    [{ field: "missing", op: "eq", value: null }, true],
    [{ field: "missing", op: "gt", value: 0 }, false],
    [{ field: "country", op: "in", values: ["de", "ch"] }, true],
    [{ field: "bot", op: "eq", value: false }, true],
    [{ and: [{ field: "bytes", op: "ge", value: 512 }, { not: { field: "bot", op: "eq", value: true } }] }, true],
    [{ or: [{ field: "page", op: "eq", value: "cart" }, { field: "ratio", op: "lt", value: 0.1 }] }, false],
  ])("evaluates %j to %s", (expr, expected) => {
    expect(compileFilter(expr)(event)).toBe(expected);
  });

  it("does not read inherited properties as fields", () => {
    expect(compileFilter({ field: "constructor", op: "eq", value: null })({})).toBe(true);
    expect(compileFilter({ field: "toString", op: "ne", value: null })({})).toBe(false);
  });
});

describe("FilterSchema", () => {
  it("refuses unknown operators, extra fields, empty lists and oversized filters", () => {
    expect(FilterSchema.safeParse({ field: "a", op: "like", value: "x" }).success).toBe(false);
    expect(FilterSchema.safeParse({ field: "a", op: "eq", value: "x", extra: 1 }).success).toBe(false);
    expect(FilterSchema.safeParse({ and: [] }).success).toBe(false);
    const wide = { or: Array.from({ length: 100 }, (_, i) => ({ field: "a", op: "eq" as const, value: i })) };
    expect(FilterSchema.safeParse(wide).success).toBe(false);
    expect(FilterSchema.safeParse({ not: { and: [{ field: "a", op: "in", values: [1, "b", null] }] } }).success).toBe(true);
  });
});

describe("routing with a filter", () => {
  it("drops events that do not pass, without validating them", () => {
    const s = spec({ filter: { field: "bytes", op: "gt", value: 0 } });
    const routed = routeEvents(s, [{ page: "a", ts: 1, bytes: 5 }, { page: "b", ts: 1, bytes: 0 }, { ts: "junk", bytes: -1 }], 0, 256, defaultKeyGroupMap(s.partitions));
    expect([...routed.values()].flat().map((r) => r[0])).toEqual(["a"]);
  });
});
