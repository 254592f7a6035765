/** Request bodies are checked before validation (issue 11): bounded nesting without recursion, no `__proto__` keys. */
import { describe, expect, it } from "vitest";
import { checkJsonShape, MAX_JSON_DEPTH } from "../../shared/http/json-shape.ts";
import { DataflowSpecSchema } from "../../shared/wire/dataflow-spec.ts";

/** `{"not": {"not": … {"field": "a", "op": "eq", "value": 1}}}`, `levels` objects deep, as text. */
const nestedNot = (levels: number) => `${'{"not":'.repeat(levels - 1)}{"field":"a","op":"eq","value":1}${"}".repeat(levels - 1)}`;

describe("checkJsonShape", () => {
  it("accepts a body nested exactly to the limit and refuses one level more, naming the limit", () => {
    expect(checkJsonShape(JSON.parse(nestedNot(MAX_JSON_DEPTH)))).toBeNull();
    const problem = checkJsonShape(JSON.parse(nestedNot(MAX_JSON_DEPTH + 1)));
    expect(problem?.message).toBe(`the body nests more than ${MAX_JSON_DEPTH} levels of objects and arrays`);
    expect(problem?.path).toHaveLength(MAX_JSON_DEPTH);
  });

  it("walks 100,000 levels without overflowing the stack", () => {
    const deep = JSON.parse(`${"[".repeat(100_000)}${"]".repeat(100_000)}`) as unknown;
    expect(checkJsonShape(deep)?.message).toMatch(/nests more than/);
  });

  it("refuses a __proto__ key at any depth, with its path", () => {
    expect(checkJsonShape(JSON.parse('{"aggregates":{"__proto__":{"op":"nope"}}}'))).toEqual({ message: "'__proto__' is not allowed as a key", path: ["aggregates", "__proto__"] });
    expect(checkJsonShape(JSON.parse('[{"a":[{"__proto__":1}]}]'))?.path).toEqual([0, "a", 0, "__proto__"]);
    expect(checkJsonShape(JSON.parse('{"constructor":1,"proto":2}'))).toBeNull();
  });

  it("is needed: zod's records drop __proto__ keys silently, so an invalid aggregate would pass", () => {
    const spec = JSON.parse('{"stream":"s","key":"k","window":{"kind":"tumbling","sizeMs":1},"aggregates":{"n":{"op":"count"},"__proto__":{"op":"bogus"}}}') as unknown;
    expect(DataflowSpecSchema.safeParse(spec).success).toBe(true);
    expect(checkJsonShape(spec)).not.toBeNull();
  });

  it("leaves room for a filter nested 60 levels deep", () => {
    const spec = JSON.parse(`{"stream":"s","key":"k","window":{"kind":"tumbling","sizeMs":1},"aggregates":{"n":{"op":"count"}},"filter":${nestedNot(60)}}`) as unknown;
    expect(checkJsonShape(spec)).toBeNull();
    expect(DataflowSpecSchema.safeParse(spec).success).toBe(true);
  });
});
