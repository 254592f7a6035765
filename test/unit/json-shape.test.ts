/** Request bodies are checked before validation (issue 11): bounded nesting without recursion, no `__proto__` keys, no key twice in one object. */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { checkJsonShape, findDuplicateKey, MAX_JSON_DEPTH } from "../../shared/http/json-shape.ts";
import { DataflowSpecSchema } from "../../shared/dataflow-checks/dataflow-spec-schema.ts";

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

describe("findDuplicateKey", () => {
  it("finds a key twice in one object, with its path through objects and arrays", () => {
    expect(findDuplicateKey('{"a":[{"x":1},{"y":{"k":1,"k":2}}]}')).toEqual({ message: "the key 'k' appears twice in one object", path: ["a", 1, "y", "k"] });
    expect(findDuplicateKey('{"op":1,"\\u006fp":2}')?.path).toEqual(["op"]);
  });

  it("lets the same key appear in different objects, and keys inside strings alone", () => {
    expect(findDuplicateKey('{"a":{"k":1},"b":{"k":1},"s":"{\\"a\\":1,\\"a\\":2}","t":["a","a"]}')).toBeNull();
  });

  it("finds nothing in any JSON.stringify output, which never repeats a key", () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => findDuplicateKey(JSON.stringify(value)) === null));
  });
});
