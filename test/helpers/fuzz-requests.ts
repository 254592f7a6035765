/**
 * Generated HTTP requests for the fuzz suite (issue 11): every route, with valid and
 * mutated path segments, query strings, headers, content types, encodings and bodies
 * (valid specs with one field replaced, deep nesting, `__proto__` keys, invalid UTF-8,
 * oversized bodies). Names of the suite's fixtures appear often, so requests reach past
 * validation into the coordinator and the replicas.
 */
import fc from "fast-check";

/** One request: method, path with query, headers and body bytes; fixed examples also name the status they must get. */
export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  expectStatus?: number;
}

/** The fixtures the suite creates before it runs: a dataflow on a plain stream, one on a declared stream. */
export const FIXTURES = { dataflow: "fz-df", stream: "fz", declaredDataflow: "fz-decl-df", declaredStream: "fz-decl" } as const;

const TOKENS = { api: "test-token", admin: "test-admin-token" };

const encoder = new TextEncoder();

/** A name for a path segment: a fixture, a valid fresh name, or something the server must refuse. */
const segment = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom<string>(FIXTURES.dataflow, FIXTURES.stream, FIXTURES.declaredDataflow, FIXTURES.declaredStream) },
  { weight: 2, arbitrary: fc.stringMatching(/^[a-z][a-z0-9_.-]{0,10}$/) },
  { weight: 1, arbitrary: fc.constantFrom("__proto__", "constructor", "..", ".", "%2e%2e", "a%2Fb", "%", "%E0%A4%A", "%00", "a b", "é", "x".repeat(65), "x".repeat(64), "-a", "_a") },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 12 }).map((s) => encodeURIComponent(s)) },
);

const replicaSegment = fc.oneof(
  fc.tuple(fc.constantFrom<string>(FIXTURES.dataflow, FIXTURES.declaredDataflow), fc.nat(3), fc.nat(2)).map(([d, p, g]) => encodeURIComponent(`${d}/p${p}/g${g}`)),
  segment,
);

/** A token id for the revoke route: well-formed (16 base64url characters) or not. */
const tokenIdSegment = fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{16}$/), segment);

/** Every route with the methods it has, and paths that have none; routes that read a body come twice (they parse the most). */
const pathTemplates = (s: string, r: string, t: string): [string, string[], BodyKind][] => [
  [`/v1/dataflows/${s}`, ["PUT"], "spec"],
  [`/v1/streams/${s}`, ["PUT"], "schema"],
  [`/v1/streams/${s}/events`, ["POST"], "events"],
  [`/v1/dataflows/${s}`, ["PUT", "GET", "DELETE"], "spec"],
  ["/v1/dataflows", ["GET"], "any"],
  [`/v1/streams/${s}`, ["PUT", "GET"], "schema"],
  ["/v1/streams", ["GET"], "any"],
  [`/v1/streams/${s}/events`, ["POST"], "events"],
  [`/v1/dataflows/${s}/results`, ["GET"], "any"],
  [`/v1/dataflows/${s}/subscribe`, ["GET"], "any"],
  ["/v1/status", ["GET"], "any"],
  ["/v1/operators", ["GET"], "any"],
  ["/v1/openapi.json", ["GET"], "any"],
  [`/v1/admin/replicas/${r}/fault`, ["POST"], "fault"],
  ["/v1/admin/tokens", ["POST"], "token"],
  [`/v1/admin/tokens/${t}/revoke`, ["POST"], "any"],
  [`/v1/${s}`, [], "any"],
  ["/", ["GET"], "any"],
];

const ANY_METHOD = ["GET", "PUT", "POST", "DELETE", "HEAD", "PATCH", "OPTIONS"];

const queryValue = fc.oneof(
  fc.constantFrom("", "0", "1", "-1", "10", "1e3", "abc", "0,0", "0,0,0,0", "9999999999999999", "summary", "full", "true", "a:b", "0:home", "home"),
  fc.string({ maxLength: 8 }),
);

const query = fc
  .array(fc.tuple(fc.constantFrom("key", "from", "to", "limit", "after", "cursor", "maxMs", "view", "pretty", "x", "__proto__"), queryValue), { maxLength: 3 })
  .map((pairs) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&"));

const goodSpec = {
  stream: FIXTURES.stream,
  key: "page",
  timeField: "ts",
  window: { kind: "tumbling", sizeMs: 1000 },
  aggregates: { n: { op: "count" }, b: { op: "sum", field: "flow.bytes" } },
  filter: { field: "flow.bytes", op: "gt", value: 0 },
  partitions: 1,
};
/** The schema of the fixtures' declared stream. */
export const DECLARED_SCHEMA = { fields: { page: { type: "string" }, ts: { type: "time" }, "flow.bytes": { type: "integer" } }, additionalFields: false };

/** The spec of the fixture dataflow on the declared stream (the suite creates it so). */
export const DECLARED_SPEC = {
  stream: FIXTURES.declaredStream,
  key: "page",
  timeField: "ts",
  window: { kind: "tumbling", sizeMs: 1000 },
  aggregates: { b: { op: "sum", field: "flow.bytes" } },
  partitions: 1,
};

/**
 * {@link DECLARED_SPEC} with one field it reads renamed: to a declared field (of the right
 * type or not), an undeclared one, or one over a length a field could hold, and sometimes a
 * partition count that differs too. Sent to the fixture's own id, each must get the answer a
 * fresh id would (issue 26: validation before comparison with the stored spec).
 */
export function declaredSpecRenamed(at: (typeof RENAMED_AT)[number], name: string, partitions: number) {
  const spec = structuredClone(DECLARED_SPEC) as Record<string, unknown> & typeof DECLARED_SPEC;
  if (at === "field") spec.aggregates.b.field = name;
  else spec[at] = name;
  spec.partitions = partitions;
  return spec;
}
/** Where {@link declaredSpecRenamed} renames, and to what. */
export const RENAMED_AT = ["key", "timeField", "field"] as const;
export const RENAMED_TO = ["page", "ts", "flow.bytes", "flow", "undeclared", "t".repeat(129)] as const;

const goodMint = { scope: "read", dataflows: [FIXTURES.dataflow], ttlSeconds: 60 };
const goodSchema = { fields: { page: { type: "string" }, ts: { type: "time" }, "flow.bytes": { type: "integer" } } };

/** A value that fits nowhere in particular: scalars, arrays, objects, nested a little. */
const junk = fc.jsonValue({ maxDepth: 3 });

/** A JSON document with one property (at any depth) replaced by junk or removed. */
function mutated(base: Record<string, unknown>): fc.Arbitrary<unknown> {
  const paths: string[][] = [];
  const walk = (value: unknown, at: string[]) => {
    if (value === null || typeof value !== "object") return;
    for (const [k, v] of Object.entries(value)) {
      paths.push([...at, k]);
      walk(v, [...at, k]);
    }
  };
  walk(base, []);
  return fc.tuple(fc.constantFrom(...paths), fc.option(junk, { nil: undefined })).map(([path, value]) => {
    const copy = structuredClone(base);
    let node: Record<string, unknown> = copy;
    for (const step of path.slice(0, -1)) node = node[step] as Record<string, unknown>;
    const last = path.at(-1) ?? "";
    if (value === undefined) delete node[last];
    else node[last] = value;
    return copy;
  });
}

/** Events that fit the fixtures, nearly fit them (a fraction where the declared stream wants an integer, an undeclared field), or not at all. */
const event = fc.oneof(
  { weight: 3, arbitrary: fc.record({ page: fc.constantFrom("a", "b", "c"), ts: fc.integer({ min: 0, max: 100_000 }), flow: fc.record({ bytes: fc.integer({ min: -5, max: 1000 }) }) }) },
  { weight: 1, arbitrary: fc.record({ page: fc.constantFrom("a", "b"), ts: fc.nat(1000), flow: fc.record({ bytes: fc.double({ min: 0.5, max: 9, noNaN: true }) }), extra: fc.constant(1) }, { requiredKeys: ["page", "ts", "flow"] }) },
  { weight: 1, arbitrary: junk },
);

/** A spec whose filter nests `levels` of `not` (or of one-element `and`/`or`), as text (too deep to build as objects cheaply). */
const deepFilterSpec = (levels: number, op: "not" | "and" | "or" = "not") => {
  const open = op === "not" ? '{"not":' : `{"${op}":[`;
  const close = op === "not" ? "}" : "]}";
  return JSON.stringify({ ...goodSpec, filter: "@" }).replace('"@"', `${open.repeat(levels)}{"field":"a","op":"eq","value":1}${close.repeat(levels)}`);
};

/** Body text for each kind of route: specs (valid, mutated, deep, with `__proto__`), schemas, events (JSON or NDJSON), faults. */
const BODIES = {
  spec: fc.oneof(
    fc.constant(JSON.stringify(goodSpec)),
    mutated(goodSpec).map((v) => JSON.stringify(v) ?? ""),
    fc.tuple(fc.integer({ min: 30, max: 3000 }), fc.constantFrom<"not" | "and" | "or">("not", "and", "or")).map(([levels, op]) => deepFilterSpec(levels, op)),
    fc.constant(JSON.stringify(goodSpec).replace('"aggregates":{', '"aggregates":{"__proto__":{"op":"bogus"},')),
    fc.tuple(fc.constantFrom(...RENAMED_AT), fc.constantFrom(...RENAMED_TO), fc.constantFrom(1, 2)).map(([at, name, p]) => JSON.stringify(declaredSpecRenamed(at, name, p))),
  ),
  schema: fc.oneof(fc.constant(JSON.stringify(goodSchema)), mutated(goodSchema).map((v) => JSON.stringify(v) ?? "")),
  events: fc.oneof(
    fc.array(event, { maxLength: 5 }).map((events) => JSON.stringify(events)),
    fc.array(event, { maxLength: 5 }).map((events) => events.map((e) => JSON.stringify(e)).join("\n")),
  ),
  fault: fc.constantFrom('{"kind":"crash"}', '{"kind":"heal"}', '{"kind":"explode"}', '{"kind":"crash","x":1}'),
  token: fc.oneof(fc.constant(JSON.stringify(goodMint)), mutated(goodMint).map((v) => JSON.stringify(v) ?? "")),
  any: fc.oneof(fc.constantFrom("{}", "[]", "null", "", "{", '{"a":1}{"a":2}'), junk.map((v) => JSON.stringify(v)), fc.string({ maxLength: 40 })),
};
type BodyKind = keyof typeof BODIES;

/** Mostly the body the route expects, sometimes any other. */
const bodyText = (kind: BodyKind) => fc.oneof({ weight: 4, arbitrary: BODIES[kind] }, { weight: 1, arbitrary: fc.oneof(...Object.values(BODIES)) });

/** Body bytes: UTF-8 of the text, sometimes with invalid bytes spliced in, sometimes far too large. */
const body = (kind: BodyKind) => fc.oneof(
  { weight: 8, arbitrary: bodyText(kind).map((t) => encoder.encode(t)) },
  { weight: 1, arbitrary: fc.tuple(bodyText(kind), fc.uint8Array({ minLength: 1, maxLength: 4 }).map((b) => b.map((x) => x | 0x80))).map(([t, bad]) => {
    const bytes = encoder.encode(t);
    const at = Math.floor(bytes.length / 2);
    return new Uint8Array([...bytes.slice(0, at), ...bad, ...bytes.slice(at)]);
  }) },
  { weight: 1, arbitrary: fc.constant(encoder.encode(JSON.stringify({ ...goodSpec, pad: "x".repeat(70_000) }))) },
);

const headers = fc.record(
  {
    authorization: fc.oneof(
      { weight: 6, arbitrary: fc.constant(`Bearer ${TOKENS.api}`) },
      { weight: 1, arbitrary: fc.constantFrom(`Bearer ${TOKENS.admin}`, "Bearer wrong", "Basic abc", "", `bearer ${TOKENS.api}`) },
    ),
    "content-type": fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom("application/json", "application/x-ndjson") },
      { weight: 1, arbitrary: fc.constantFrom("application/json; charset=utf-8", "text/plain", "application/xml", "multipart/form-data; boundary=x", "application/problem+json", "") },
    ),
    "flux-producer-id": fc.oneof(fc.constantFrom("fz-producer", "p:1", "a/b", "", "x".repeat(129)), fc.string({ maxLength: 6 })),
    "flux-seq": fc.oneof(fc.integer({ min: 1, max: 40 }).map(String), fc.constantFrom("0", "-1", "1.5", "9007199254740993", "99999999999999999", "abc", "")),
    "last-event-id": fc.constantFrom("0", "0,0", "x", ""),
  },
  { requiredKeys: ["authorization"] },
);

/** The request generator. Subscriptions get a short `maxMs` so a valid one ends quickly. */
export const fuzzRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    route: fc.tuple(segment, replicaSegment, tokenIdSegment).chain(([s, r, t]) => fc.constantFrom(...pathTemplates(s, r, t))).chain(([path, methods, kind]) =>
      fc.record({
        path: fc.constant(path),
        method: methods.length > 0 ? fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...methods) }, fc.constantFrom(...ANY_METHOD)) : fc.constantFrom(...ANY_METHOD),
        body: fc.option(body(kind), { nil: undefined, freq: 6 }),
      }),
    ),
    query,
    headers,
  })
  .map(({ route: { method, path, body: b }, query: q, headers: h }) => {
    const subscribe = path.endsWith("/subscribe");
    const withQuery = subscribe ? `${q}${q ? "&" : ""}maxMs=20` : q;
    // A fetch Request cannot carry a body on GET or HEAD.
    const sendsBody = b !== undefined && method !== "GET" && method !== "HEAD";
    return { method, path: withQuery ? `${path}?${withQuery}` : path, headers: Object.fromEntries(Object.entries(h).filter(([, v]) => v !== undefined)) as Record<string, string>, ...(sendsBody ? { body: b } : {}) };
  });

const json = { authorization: `Bearer ${TOKENS.api}`, "content-type": "application/json" };

/** The defects of issue 11 as fixed examples the suite always runs, each with the status it must get. */
export const FIXED_EXAMPLES: FuzzRequest[] = [
  { method: "PUT", path: "/v1/dataflows/fz-deep", headers: json, body: encoder.encode(deepFilterSpec(1300)), expectStatus: 400 },
  { method: "PUT", path: "/v1/dataflows/fz-utf8", headers: json, body: new Uint8Array([...encoder.encode('{"stream":"'), 0xff, ...encoder.encode('"}')]), expectStatus: 400 },
  { method: "PUT", path: "/v1/streams/fz-proto", headers: json, body: encoder.encode('{"fields":{"a":{"type":"string"},"__proto__":{"type":"x"}}}'), expectStatus: 400 },
  { method: "PUT", path: "/v1/dataflows/fz-text", headers: { ...json, "content-type": "text/plain" }, body: encoder.encode(JSON.stringify(goodSpec)), expectStatus: 415 },
  { method: "PUT", path: "/v1/dataflows/__proto__", headers: json, body: encoder.encode(JSON.stringify(goodSpec)), expectStatus: 400 },
  // Issue 26: a spec its stream's schema refuses, under an existing id, is a 400 as under a new one (it was a 409).
  { method: "PUT", path: `/v1/dataflows/${FIXTURES.declaredDataflow}`, headers: json, body: encoder.encode(JSON.stringify({ ...DECLARED_SPEC, timeField: "t".repeat(129) })), expectStatus: 400 },
  { method: "POST", path: `/v1/admin/replicas/${encodeURIComponent(`${FIXTURES.dataflow}/p0/g0`)}/fault`, headers: json, body: encoder.encode('{"kind":"crash"}'), expectStatus: 403 },
  // Every event filtered out: 200 and no partition touched (defect 2 is checked on its body in strict-input.test.ts).
  { method: "POST", path: `/v1/streams/${FIXTURES.stream}/events`, headers: { ...json, "flux-producer-id": "fz-fixed", "flux-seq": "1" }, body: encoder.encode('[{"page":"a","ts":1,"flow":{"bytes":0}}]'), expectStatus: 200 },
  // A fraction where the declared stream wants an integer: refused whole, nothing applied.
  { method: "POST", path: `/v1/streams/${FIXTURES.declaredStream}/events`, headers: { ...json, "flux-producer-id": "fz-fixed", "flux-seq": "2" }, body: encoder.encode('[{"page":"a","ts":1,"flow":{"bytes":1}},{"page":"a","ts":1,"flow":{"bytes":1.5}}]'), expectStatus: 400 },
];
