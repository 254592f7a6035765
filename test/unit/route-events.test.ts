/** Validating and routing events for a dataflow: compact records per partition, or one error listing every problem. */
import { describe, expect, it } from "vitest";
import { fluxErrorOf } from "../helpers/flux-error.ts";
import { MAX_FIELD_MAGNITUDE, MAX_FUTURE_MS, routeEvents, type EventProblem } from "../../shared/ingest/route-events.ts";
import { partitionFor } from "../../shared/partitioner.ts";
import { defaultKeyGroupMap, keyGroupOf, type KeyGroupMap } from "../../shared/keygroups/key-groups.ts";
import { DataflowSpecSchema } from "../../shared/dataflow-checks/dataflow-spec-schema.ts";
import type { DataflowSpec } from "../../shared/wire/dataflow-spec.ts";
import type { FluxRecord } from "../../shared/wire/window-result.ts";

const RECEIVED_AT = 1_700_000_000_000;
const MAX_KEY = 8;

/** Key `user`, time `ts`, numeric fields `bytes` and `latency` (sorted, so records are [key, t, bytes, latency]). */
function makeSpec(overrides: Record<string, unknown> = {}): DataflowSpec {
  return DataflowSpecSchema.parse({
    stream: "clicks",
    key: "user",
    timeField: "ts",
    window: { kind: "tumbling", sizeMs: 1000 },
    aggregates: { n: { op: "count" }, slow: { op: "max", field: "latency" }, total: { op: "sum", field: "bytes" } },
    partitions: 8,
    ...overrides,
  });
}

/** The key groups of a dataflow stored before issue 28 (16 per partition): keys land where `partitionFor` puts them. */
const legacyGroups = (spec: DataflowSpec): KeyGroupMap => defaultKeyGroupMap(spec.partitions);

/** The problems listed by the INVALID_EVENT error that routing `events` throws. */
function problemsOf(events: unknown[], spec = makeSpec()): { problems: EventProblem[]; problemCount: number } {
  const err = fluxErrorOf(() => routeEvents(spec, events, RECEIVED_AT, MAX_KEY, legacyGroups(spec)));
  expect(err.code).toBe("INVALID_EVENT");
  expect(err.status).toBe(400);
  return err.details as { problems: EventProblem[]; problemCount: number };
}

/** All routed records, flattened, with the partition each landed in. */
function routed(spec: DataflowSpec, events: unknown[]): [number, FluxRecord][] {
  const byPartition = routeEvents(spec, events, RECEIVED_AT, MAX_KEY, legacyGroups(spec));
  return [...byPartition.entries()].flatMap(([p, records]) => records.map((r): [number, FluxRecord] => [p, r]));
}

const good = { user: "alice", ts: 5000, bytes: 10, latency: 3 };

describe("routeEvents records", () => {
  it("builds [key, timeMs, ...fields in sorted name order] from a valid event", () => {
    expect(routed(makeSpec(), [{ ...good, extra: "ignored" }])).toEqual([[partitionFor("alice", 8), ["alice", 5000, 10, 3]]]);
  });

  it("keys by several fields as the JSON array of their values, and names each bad one", () => {
    const s = makeSpec({ key: ["user", "port"] });
    const byPartition = routeEvents(s, [{ ...good, port: 443 }, { ...good, port: "443" }], RECEIVED_AT, 256, legacyGroups(s));
    const key = '["alice","443"]';
    expect([...byPartition.entries()]).toEqual([[partitionFor(key, 8), [[key, 5000, 10, 3], [key, 5000, 10, 3]]]]);
    const err = fluxErrorOf(() => routeEvents(s, [{ ...good, port: true }, { ...good, user: "", port: 1 }], RECEIVED_AT, 256, legacyGroups(s)));
    expect((err.details as { problems: EventProblem[] }).problems.map((p) => [p.index, p.field])).toEqual([
      [0, "port"],
      [1, "user"],
    ]);
    expect(problemsOf([{ ...good, port: 443 }], s).problems.map((p) => p.problem)).toEqual(["key longer than 8 characters (UTF-16 code units: an emoji counts 2)"]);
  });

  it("turns numeric keys into their string form", () => {
    const records = routed(makeSpec(), [{ ...good, user: 42 }, { ...good, user: 1.5 }, { ...good, user: -7 }]);
    expect(records.map(([, r]) => r[0]).sort()).toEqual(["-7", "1.5", "42"]);
    expect(records.find(([, r]) => r[0] === "42")?.[0]).toBe(partitionFor("42", 8));
  });

  it.each([
    ["2023-11-14T22:13:20Z", 1_700_000_000_000],
    ["2023-11-14T22:13:20.250Z", 1_700_000_000_250],
    ["2023-11-15T00:13:20+02:00", 1_700_000_000_000],
    ["2023-11-14T22:13Z", 1_699_999_980_000],
  ])("reads ISO-8601 time %s as %d ms", (ts, ms) => {
    expect(routed(makeSpec(), [{ ...good, ts }])[0]?.[1][1]).toBe(ms);
  });

  it("keeps epoch-millisecond times as given, including zero, fractions and up to 24 h ahead", () => {
    const records = routed(makeSpec(), [{ ...good, ts: 0 }, { ...good, ts: 1234.5 }, { ...good, ts: RECEIVED_AT + MAX_FUTURE_MS }]);
    expect(records.map(([, r]) => r[1])).toEqual([0, 1234.5, RECEIVED_AT + MAX_FUTURE_MS]);
  });

  it("refuses times before 1970 or more than 24 h ahead, and field values beyond ±1e15", () => {
    const { problems } = problemsOf([
      { ...good, ts: -1 },
      { ...good, ts: RECEIVED_AT + MAX_FUTURE_MS + 1 },
      { ...good, ts: "9999-12-31T00:00Z" },
      { ...good, bytes: MAX_FIELD_MAGNITUDE * 10 },
      { ...good, bytes: -MAX_FIELD_MAGNITUDE, latency: MAX_FIELD_MAGNITUDE },
    ]);
    expect(problems.map((p) => [p.index, p.field])).toEqual([
      [0, "ts"],
      [1, "ts"],
      [2, "ts"],
      [3, "bytes"],
    ]);
  });

  it("stamps every event with receivedAtMs when the spec has no timeField, ignoring any ts", () => {
    const spec = makeSpec({ timeField: undefined });
    const records = routed(spec, [{ user: "a", bytes: 1, latency: 1 }, { user: "b", ts: "junk", bytes: 2, latency: 2 }]);
    expect(records.map(([, r]) => r[1])).toEqual([RECEIVED_AT, RECEIVED_AT]);
  });

  it("puts a key on the partition that owns its key group in the dataflow's table, whatever the partition count", () => {
    const groups = 256;
    const spec = makeSpec({ partitions: 3 });
    const owners = Array.from({ length: groups }, (_, g) => (g * 7) % 3);
    const table: KeyGroupMap = { groups, partitions: 3, owners };
    const events = Array.from({ length: 300 }, (_, i) => ({ user: `u${i}`, ts: RECEIVED_AT, bytes: 1, latency: 1 }));
    const byPartition = routeEvents(spec, events, RECEIVED_AT, MAX_KEY, table);
    for (const [p, records] of byPartition) for (const r of records) expect(owners[keyGroupOf(r[0], groups)], r[0]).toBe(p);
    expect([...byPartition.values()].flat()).toHaveLength(300);
    // Without owners, group g is on partition g mod 3 (not hash mod 3: 256 groups are not a multiple of 3).
    const plain = routeEvents(spec, events, RECEIVED_AT, MAX_KEY, { groups, partitions: 3, owners: null });
    for (const [p, records] of plain) for (const r of records) expect(keyGroupOf(r[0], groups) % 3, r[0]).toBe(p);
  });

  it("puts every record in partitionFor(key, partitions), keeping batch order within a partition", () => {
    const spec = makeSpec({ partitions: 5 });
    const events = Array.from({ length: 200 }, (_, i) => ({ user: `u${i % 37}`, ts: i, bytes: i, latency: 0 }));
    const byPartition = routeEvents(spec, events, RECEIVED_AT, MAX_KEY, legacyGroups(spec));
    let total = 0;
    for (const [p, records] of byPartition) {
      expect(records.length, `partition ${p}`).toBeGreaterThan(0);
      for (const r of records) expect(partitionFor(r[0], 5), r[0]).toBe(p);
      const times = records.map((r) => r[1]);
      expect(times).toEqual([...times].sort((a, b) => a - b));
      total += records.length;
    }
    expect(total).toBe(200);
    expect(byPartition.size).toBeGreaterThan(1);
  });

  it("returns an empty map for an empty batch", () => {
    expect(routeEvents(makeSpec(), [], RECEIVED_AT, MAX_KEY, legacyGroups(makeSpec())).size).toBe(0);
  });

  it("accepts a key of exactly the maximum length", () => {
    expect(routed(makeSpec(), [{ ...good, user: "x".repeat(MAX_KEY) }])).toHaveLength(1);
  });

  it("needs no numeric fields when the spec only counts", () => {
    const spec = makeSpec({ aggregates: { n: { op: "count" } } });
    expect(routed(spec, [{ user: "a", ts: 1 }])).toEqual([[partitionFor("a", 8), ["a", 1]]]);
  });
});

describe("routeEvents problems", () => {
  it.each([
    ["a missing key", { ts: 1, bytes: 1, latency: 1 }, "user"],
    ["a boolean key", { ...good, user: true }, "user"],
    ["an object key", { ...good, user: { id: 1 } }, "user"],
    ["a null key", { ...good, user: null }, "user"],
    ["an empty key", { ...good, user: "" }, "user"],
    ["a key longer than the maximum", { ...good, user: "x".repeat(MAX_KEY + 1) }, "user"],
    ["a missing time", { user: "a", bytes: 1, latency: 1 }, "ts"],
    ["a time that is not a date", { ...good, ts: "yesterday" }, "ts"],
    ["an ISO time without a zone", { ...good, ts: "2023-11-14T22:13:20" }, "ts"],
    ["a date without a time", { ...good, ts: "2023-11-14" }, "ts"],
    ["a numeric string time", { ...good, ts: "5000" }, "ts"],
    ["a boolean time", { ...good, ts: false }, "ts"],
    ["a missing numeric field", { user: "a", ts: 1, latency: 1 }, "bytes"],
    ["a numeric field given as a string", { ...good, latency: "3" }, "latency"],
    ["a null numeric field", { ...good, bytes: null }, "bytes"],
  ])("rejects %s, naming the event's index and the field", (_what, bad, field) => {
    const { problems, problemCount } = problemsOf([good, good, bad]);
    expect(problemCount).toBe(1);
    expect(problems).toEqual([{ index: 2, field, problem: expect.any(String) }]);
  });

  it.each([null, 5, "text", [1, 2]])("rejects the non-object event %j with an empty field name", (bad) => {
    expect(problemsOf([bad, good]).problems).toEqual([{ index: 0, field: "", problem: "event must be a JSON object" }]);
  });

  it("describes key problems in words", () => {
    const { problems } = problemsOf([{ ...good, user: "" }, { ...good, user: "x".repeat(9) }, { ...good, user: false }, { ts: 1, bytes: 1, latency: 1 }]);
    expect(problems.map((p) => p.problem)).toEqual([
      "key must not be empty",
      `key longer than ${MAX_KEY} characters (UTF-16 code units: an emoji counts 2)`,
      "key must be a string or a finite number, got false",
      "key must be a string or a finite number (missing)",
    ]);
  });

  it("lists every problem of an event and of later events, in order", () => {
    const { problems, problemCount } = problemsOf([good, { ts: "nope", bytes: "1" }, good, { ...good, latency: [] }]);
    expect(problemCount).toBe(5);
    expect(problems.map((p) => [p.index, p.field])).toEqual([
      [1, "user"],
      [1, "ts"],
      [1, "bytes"],
      [1, "latency"],
      [3, "latency"],
    ]);
  });

  it("caps the listed problems at 20 while counting them all", () => {
    const events = Array.from({ length: 30 }, () => ({ ...good, user: "" }));
    const { problems, problemCount } = problemsOf(events);
    expect(problemCount).toBe(30);
    expect(problems).toHaveLength(20);
    expect(problems.map((p) => p.index)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it("gives an error envelope listing the problems", () => {
    const err = fluxErrorOf(() => routeEvents(makeSpec(), [good, { ...good, user: "" }], RECEIVED_AT, MAX_KEY, legacyGroups(makeSpec())));
    expect(err.toEnvelope()).toMatchInlineSnapshot(`
      {
        "error": {
          "code": "INVALID_EVENT",
          "details": {
            "problemCount": 1,
            "problems": [
              {
                "field": "user",
                "index": 1,
                "problem": "key must not be empty",
              },
            ],
          },
          "message": "1 problem(s) in the batch; nothing was applied",
        },
      }
    `);
  });
});

describe("routeEvents projection and string fields", () => {
  const projected = () =>
    makeSpec({
      project: { user: "who.name", ts: "at", bytes: "size.bytes", latency: "ms", dst: "net.dst" },
      aggregates: { n: { op: "count" }, total: { op: "sum", field: "bytes" }, slow: { op: "max", field: "latency" }, dsts: { op: "distinct", field: "dst" } },
    });
  const nested = { who: { name: "alice" }, at: 5000, size: { bytes: 10 }, ms: 3, net: { dst: "10.0.0.9" } };

  it("reads key, time and fields through the projection's dotted paths; strings come after numbers", () => {
    expect(routed(projected(), [nested])).toEqual([[partitionFor("alice", 8), ["alice", 5000, 10, 3, "10.0.0.9"]]]);
    // Numbers are accepted where a string is read, as their decimal text.
    expect(routed(projected(), [{ ...nested, net: { dst: 42 } }])[0]?.[1]).toEqual(["alice", 5000, 10, 3, "42"]);
  });

  it("names the projected field when its path is missing or of the wrong type", () => {
    const { problems } = problemsOf([{ ...nested, size: {} }, { ...nested, who: "alice" }, { ...nested, net: { dst: true } }], projected());
    expect(problems.map((p) => [p.index, p.field])).toEqual([
      [0, "bytes"],
      [1, "user"],
      [2, "dst"],
    ]);
  });

  it("filters on the event as posted, before the projection", () => {
    const s = makeSpec({ ...projected(), filter: { field: "ms", op: "gt", value: 5 } });
    expect(routed(s, [nested, { ...nested, ms: 9 }]).map(([, r]) => r[3])).toEqual([9]);
  });

  it("is refused at creation when a used field is not projected, naming where it is used", () => {
    const result = DataflowSpecSchema.safeParse({ ...projected(), project: { user: "u", ts: "t" } });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path.join("."))).toEqual(["aggregates.total.field", "aggregates.slow.field", "aggregates.dsts.field"]);
  });
});

describe("routeEvents keys and Unicode", () => {
  it("accepts keys outside the Basic Multilingual Plane and refuses lone surrogates", () => {
    expect(routed(makeSpec(), [{ ...good, user: "😀" }])[0]?.[1][0]).toBe("😀");
    const { problems } = problemsOf([{ ...good, user: "a\uD83D" }, { ...good, user: "\uDE00b" }]);
    expect(problems.map((p) => [p.index, p.field, p.problem])).toEqual([
      [0, "user", "key must be well-formed Unicode (no lone surrogate)"],
      [1, "user", "key must be well-formed Unicode (no lone surrogate)"],
    ]);
  });
});
