/**
 * A dataflow fits its stream's schema only if events can hold what it reads: a path inside
 * a declared object is readable unless its nearest declared ancestor is of another type,
 * or that object declares fields of its own while `additionalFields` is false. Before, any
 * declared object ancestor let a path through, so a spec every event would fail was
 * accepted. Each case also posts, to the stream's own validator, an event carrying a
 * number at the path: the check admits the spec exactly when the validator admits the event.
 */
import { describe, expect, it } from "vitest";
import { specProblems } from "../../shared/dataflow-checks/stream-schema-fit.ts";
import { eventSchemaOf, StreamSchemaSchema } from "../../shared/wire/stream-schema.ts";
import { spec } from "../helpers/fixtures.ts";

type Case = { name: string; fields: Record<string, unknown>; additionalFields?: boolean; field: string; event: Record<string, unknown>; problem: string | null };

const cases: Case[] = [
  {
    name: "a path under a field declared as string",
    fields: { k: { type: "string" }, o: { type: "object" }, "o.p": { type: "string" } },
    field: "o.p.q",
    event: { k: "a", o: { p: { q: 1 } } },
    problem: "aggregates.s.field: 'o.p' is declared as string, so no event holds 'o.p.q'",
  },
  {
    name: "an undeclared path in an object that declares its fields, with additionalFields false",
    fields: { k: { type: "string" }, o: { type: "object" }, "o.x": { type: "number", required: false } },
    additionalFields: false,
    field: "o.q",
    event: { k: "a", o: { q: 1 } },
    problem: "aggregates.s.field: 'o' declares fields of its own and the stream has additionalFields false, so no event holds the undeclared 'o.q': declare it",
  },
  {
    name: "an undeclared path below an undeclared level of such an object",
    fields: { k: { type: "string" }, o: { type: "object" }, "o.x.y": { type: "number" } },
    additionalFields: false,
    field: "o.x.z",
    event: { k: "a", o: { x: { y: 2, z: 1 } } },
    problem: "aggregates.s.field: 'o' declares fields of its own and the stream has additionalFields false, so no event holds the undeclared 'o.x.z': declare it",
  },
  {
    name: "a level that holds declared fields, read as a number",
    fields: { k: { type: "string" }, o: { type: "object" }, "o.x.y": { type: "number" } },
    field: "o.x",
    event: { k: "a", o: { x: 1 } },
    problem: "aggregates.s.field: 'o.x' is declared as object; this use needs number or integer",
  },
  {
    name: "a path in an object with no declared fields, with additionalFields false",
    fields: { k: { type: "string" }, o: { type: "object" } },
    additionalFields: false,
    field: "o.q",
    event: { k: "a", o: { q: 1 } },
    problem: null,
  },
  {
    name: "an undeclared path in an object that declares fields, with additionalFields true",
    fields: { k: { type: "string" }, o: { type: "object" }, "o.x": { type: "number", required: false } },
    field: "o.q",
    event: { k: "a", o: { q: 1 } },
    problem: null,
  },
  {
    name: "a declared nested field, with additionalFields false",
    fields: { k: { type: "string" }, o: { type: "object" }, "o.p": { type: "object" }, "o.p.q": { type: "number" } },
    additionalFields: false,
    field: "o.p.q",
    event: { k: "a", o: { p: { q: 1 } } },
    problem: null,
  },
];

describe("specProblems: paths inside declared objects", () => {
  for (const c of cases) {
    it(`${c.problem === null ? "admits" : "refuses"} ${c.name}`, () => {
      const schema = StreamSchemaSchema.parse({ fields: c.fields, additionalFields: c.additionalFields ?? true });
      const s = spec({ stream: "aud", key: "k", timeField: undefined, aggregates: { s: { op: "sum", field: c.field } } });
      const problems = specProblems(schema, s).map((p) => `${p.path.join(".")}: ${p.message}`);
      expect(problems).toEqual(c.problem === null ? [] : [c.problem]);
      expect(eventSchemaOf(schema).safeParse(c.event).success, "the stream's validator agrees").toBe(c.problem === null);
    });
  }

  it("reports such a path once, at its project entry, and in a filter", () => {
    const schema = StreamSchemaSchema.parse({ fields: { k: { type: "string" }, o: { type: "object" }, "o.p": { type: "string" } } });
    const projected = spec({ stream: "aud", key: "k", timeField: undefined, project: { k: "k", v: "o.p.q" }, aggregates: { s: { op: "sum", field: "v" } } });
    expect(specProblems(schema, projected)).toEqual([{ path: ["project", "v"], message: "'o.p' is declared as string, so no event holds 'o.p.q'" }]);
    const filtered = spec({ stream: "aud", key: "k", timeField: undefined, filter: { field: "o.p.q", op: "eq", value: 1 }, aggregates: { n: { op: "count" } } });
    expect(specProblems(schema, filtered)).toEqual([{ path: ["filter"], message: "'o.p' is declared as string, so no event holds 'o.p.q'" }]);
  });
});
