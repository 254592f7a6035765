/** Parsing posted bodies: JSON arrays and NDJSON, with 4xx errors that name where parsing broke. */
import { describe, expect, it } from "vitest";
import { fluxErrorOf } from "../helpers/flux-error.ts";
import { isNdjson, parseEventsBody } from "../../shared/ingest/parse-body.ts";


describe("parseEventsBody as JSON", () => {
  it("returns the elements of a JSON array in order", () => {
    expect(parseEventsBody('[{"a":1},{"b":"x"},3,null]', false)).toEqual([{ a: 1 }, { b: "x" }, 3, null]);
  });

  it("returns an empty list for an empty array, surrounding whitespace allowed", () => {
    expect(parseEventsBody(" \n[]\n ", false)).toEqual([]);
  });

  it.each(['[{"a":1},]', "[{a:1}]", "", "[", '{"a":1}{"b":2}'])("throws INVALID_JSON for malformed body %j", (body) => {
    const err = fluxErrorOf(() => parseEventsBody(body, false));
    expect(err.code).toBe("INVALID_JSON");
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/^body is not valid JSON: /);
  });

  it.each(['{"a":1}', "42", "null", '"[1]"', "true"])("throws INVALID_REQUEST for the non-array JSON body %s", (body) => {
    const err = fluxErrorOf(() => parseEventsBody(body, false));
    expect(err.code).toBe("INVALID_REQUEST");
    expect(err.status).toBe(400);
  });

  it("does not read an NDJSON body as JSON when NDJSON was not asked for", () => {
    expect(fluxErrorOf(() => parseEventsBody('{"a":1}\n{"a":2}', false)).code).toBe("INVALID_JSON");
  });

  it("gives an error envelope naming the problem", () => {
    expect(fluxErrorOf(() => parseEventsBody('{"a":1}', false)).toEnvelope()).toMatchInlineSnapshot(`
      {
        "error": {
          "code": "INVALID_REQUEST",
          "message": "body must be a JSON array of events (or NDJSON with content-type application/x-ndjson)",
        },
      }
    `);
  });
});

describe("parseEventsBody as NDJSON", () => {
  it("parses one value per line, skipping blank and whitespace-only lines", () => {
    const body = '\n{"a":1}\n\n   \n{"a":2}\t\n\n[1,2]\n';
    expect(parseEventsBody(body, true)).toEqual([{ a: 1 }, { a: 2 }, [1, 2]]);
  });

  it("accepts CRLF line endings", () => {
    expect(parseEventsBody('{"a":1}\r\n{"a":2}\r\n', true)).toEqual([{ a: 1 }, { a: 2 }]);
  });

  it("returns an empty list for an empty or blank body", () => {
    expect(parseEventsBody("", true)).toEqual([]);
    expect(parseEventsBody("\n\n  \n", true)).toEqual([]);
  });

  it("keeps a JSON string containing an escaped newline on its line", () => {
    expect(parseEventsBody('{"s":"a\\nb"}\n{"s":"c"}', true)).toEqual([{ s: "a\nb" }, { s: "c" }]);
  });

  it("throws INVALID_JSON with the 1-based physical line of the first malformed line, counting blank lines", () => {
    const body = '{"a":1}\n\n{"a":2,}\n{oops}\n';
    const err = fluxErrorOf(() => parseEventsBody(body, true));
    expect(err.code).toBe("INVALID_JSON");
    expect(err.details).toEqual({ line: 3 });
    expect(err.message).toMatch(/^NDJSON line 3 is not valid JSON: /);
  });

  it("does not pass on the parser's own '(line 1 column N)', which names the wrong line", () => {
    const err = fluxErrorOf(() => parseEventsBody('{"a":1}\n{bad\n', true));
    expect(err.message).toMatch(/^NDJSON line 2 is not valid JSON: .*position 1$/);
    expect(err.message).not.toMatch(/line 1/);
  });

  it("reports line 1 when the first line is malformed", () => {
    expect(fluxErrorOf(() => parseEventsBody('{"a":\n{"a":1}', true)).details).toEqual({ line: 1 });
  });

  it("rejects a pretty-printed object spread over lines", () => {
    const err = fluxErrorOf(() => parseEventsBody('{"a":1}\n{\n  "b": 2\n}', true));
    expect(err.code).toBe("INVALID_JSON");
    expect(err.details).toEqual({ line: 2 });
  });
});

describe("isNdjson", () => {
  it.each(["application/x-ndjson", "application/ndjson", "application/jsonl", "Application/X-NDJSON", " application/x-ndjson ; charset=utf-8"])(
    "treats %j as NDJSON",
    (type) => {
      expect(isNdjson(type)).toBe(true);
    },
  );

  it.each([undefined, "", "application/json", "text/plain", "application/x-ndjson-seq", "application/json; x=application/x-ndjson"])(
    "does not treat %j as NDJSON",
    (type) => {
      expect(isNdjson(type)).toBe(false);
    },
  );
});
