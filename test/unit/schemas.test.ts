/** Wire and config schemas: spec defaults and refusals, producer headers, config parsing. */
import { describe, expect, it } from "vitest";
import { parseFluxConfig } from "../../shared/config.ts";
import { DataflowSpecSchema } from "../../shared/dataflow-checks/dataflow-spec-schema.ts";
import { StoredDataflowSpecSchema } from "../../shared/wire/dataflow-spec.ts";
import { windowRecordFields } from "../../shared/operators/window-aggregate.ts";
import { ProducerHeadersSchema } from "../../shared/wire/ingest.ts";

const minimal = {
  stream: "clicks",
  key: "user",
  window: { kind: "tumbling", sizeMs: 60_000 },
  aggregates: { n: { op: "count" } },
};

/** The minimal spec with `patch` applied; a `window` patch is merged into the window. */
function specWith(patch: Record<string, unknown>): unknown {
  const { window, ...rest } = patch;
  return { ...minimal, ...rest, window: { ...minimal.window, ...(window as object | undefined) } };
}

/** Paths of the issues a failed parse reports, e.g. ["window.sizeMs"]. */
function issuePaths(input: unknown): string[] {
  const result = DataflowSpecSchema.safeParse(input);
  expect(result.success, JSON.stringify(input)).toBe(false);
  return (result.error?.issues ?? []).map((i) => i.path.join("."));
}

describe("DataflowSpecSchema", () => {
  it("refuses names starting with '__' (a record would drop __proto__ silently)", () => {
    expect(issuePaths({ ...minimal, aggregates: { __proto__x: { op: "count" } } })).toEqual(["aggregates.__proto__x"]);
    expect(issuePaths({ ...minimal, stream: "__proto__" })).toEqual(["stream"]);
  });

  it("fills in partitions 4, replication 2 and allowedLatenessMs 0", () => {
    expect(DataflowSpecSchema.parse(minimal)).toEqual({
      stream: "clicks",
      key: "user",
      window: { kind: "tumbling", sizeMs: 60_000, allowedLatenessMs: 0 },
      aggregates: { n: { op: "count" } },
      partitions: 4,
      replication: 2,
    });
  });

  it("keeps explicit values, a timeField and every aggregate kind", () => {
    const full = {
      ...minimal,
      timeField: "ts",
      window: { kind: "tumbling", sizeMs: 1, allowedLatenessMs: 5000 },
      aggregates: {
        n: { op: "count" },
        total: { op: "sum", field: "bytes" },
        "lo.v": { op: "min", field: "v" },
        hi_v: { op: "max", field: "v" },
        "mean-v": { op: "avg", field: "v" },
      },
      partitions: 64,
      replication: 1,
    };
    const spec = DataflowSpecSchema.parse(full);
    expect(spec).toEqual(full);
    expect(windowRecordFields(spec.aggregates ?? {})).toEqual([
      { name: "bytes", type: "number" },
      { name: "v", type: "number" },
    ]);
  });

  it.each([
    ["a top-level field", { ...minimal, replicas: 2 }, ""],
    ["a window field", specWith({ window: { slideMs: 10 } }), "window"],
    ["an aggregate field", specWith({ aggregates: { n: { op: "count", field: "x" } } }), "aggregates.n"],
  ])("rejects an unknown %s", (_what, input, path) => {
    expect(issuePaths(input)).toEqual([path]);
  });

  it.each(["", "has space", ".hidden", "-dash", "a/b", "é", "x".repeat(65)])("rejects the stream name %j", (stream) => {
    expect(issuePaths(specWith({ stream }))).toContain("stream");
  });

  it.each(["a", "_x", "0", "Clicks.v2-eu_1", "x".repeat(64)])("accepts the stream name %j", (stream) => {
    expect(DataflowSpecSchema.safeParse(specWith({ stream })).success).toBe(true);
  });

  it("rejects bad aggregate names", () => {
    expect(DataflowSpecSchema.safeParse(specWith({ aggregates: { "bad name": { op: "count" } } })).success).toBe(false);
    expect(DataflowSpecSchema.safeParse(specWith({ aggregates: { "": { op: "count" } } })).success).toBe(false);
  });

  it("rejects an empty key or field name", () => {
    expect(issuePaths(specWith({ key: "" }))).toEqual(["key"]);
    expect(issuePaths(specWith({ timeField: "" }))).toEqual(["timeField"]);
    expect(issuePaths(specWith({ aggregates: { s: { op: "sum", field: "" } } }))).toEqual(["aggregates.s.field"]);
  });

  it.each(["sum", "min", "max", "avg"])("rejects %s without a field", (op) => {
    expect(issuePaths(specWith({ aggregates: { s: { op } } }))).toEqual(["aggregates.s.field"]);
  });

  it("rejects an unknown aggregate op", () => {
    expect(issuePaths(specWith({ aggregates: { s: { op: "median", field: "v" } } }))).toEqual(["aggregates.s.op"]);
  });

  it("rejects an empty aggregates object and more than 32 aggregates", () => {
    expect(issuePaths(specWith({ aggregates: {} }))).toEqual(["aggregates"]);
    const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`a${i}`, { op: "count" }]));
    expect(issuePaths(specWith({ aggregates: many }))).toEqual(["aggregates"]);
    const most = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`a${i}`, { op: "count" }]));
    expect(DataflowSpecSchema.safeParse(specWith({ aggregates: most })).success).toBe(true);
  });

  it.each([0, 65, -1, 2.5, "4"])("rejects partitions %j", (partitions) => {
    expect(issuePaths(specWith({ partitions }))).toEqual(["partitions"]);
  });

  it.each([1, 64])("accepts partitions %d", (partitions) => {
    expect(DataflowSpecSchema.parse(specWith({ partitions })).partitions).toBe(partitions);
  });

  it.each([0, 3, "2"])("rejects replication %j", (replication) => {
    expect(issuePaths(specWith({ replication }))).toEqual(["replication"]);
  });

  it.each([
    ["sizeMs 0", { sizeMs: 0 }, "window.sizeMs"],
    ["fractional sizeMs", { sizeMs: 1.5 }, "window.sizeMs"],
    ["sizeMs over a leap year", { sizeMs: 366 * 86_400_000 + 1 }, "window.sizeMs"],
    ["negative lateness", { allowedLatenessMs: -1 }, "window.allowedLatenessMs"],
    ["an unknown window kind", { kind: "session" }, "window.kind"],
    ["a sliding window without slideMs", { kind: "sliding" }, "window.slideMs"],
    ["a slide that does not divide the size", { kind: "sliding", slideMs: 7_000 }, "window.slideMs"],
    ["more than 60 windows per record", { kind: "sliding", slideMs: 500 }, "window.slideMs"],
  ])("rejects a window with %s", (_what, window, path) => {
    expect(issuePaths(specWith({ window }))).toEqual([path]);
  });
});

describe("ProducerHeadersSchema", () => {
  const parse = (headers: Record<string, string>) => ProducerHeadersSchema.safeParse(headers);

  it("parses the producer id and the seq as a number, ignoring other headers", () => {
    expect(ProducerHeadersSchema.parse({ "flux-producer-id": "svc-a:1.x_y", "flux-seq": "42", "content-type": "x" })).toEqual({
      "flux-producer-id": "svc-a:1.x_y",
      "flux-seq": 42,
    });
  });

  it("accepts seq 1 and the largest safe integer", () => {
    expect(parse({ "flux-producer-id": "p", "flux-seq": "1" }).data?.["flux-seq"]).toBe(1);
    expect(parse({ "flux-producer-id": "p", "flux-seq": "9007199254740991" }).data?.["flux-seq"]).toBe(Number.MAX_SAFE_INTEGER);
  });

  it("says which header is missing", () => {
    const messages = (headers: Record<string, string>) => (parse(headers).error?.issues ?? []).map((i) => i.message);
    expect(messages({ "flux-seq": "1" })).toEqual(["Flux-Producer-Id header is required"]);
    expect(messages({ "flux-producer-id": "p" })).toEqual(["Flux-Seq header is required"]);
    expect(messages({})).toHaveLength(2);
  });

  it("says a producer id is too long, not missing", () => {
    const messages = (headers: Record<string, string>) => (parse(headers).error?.issues ?? []).map((i) => i.message);
    expect(messages({ "flux-producer-id": "x".repeat(129), "flux-seq": "1" })).toEqual(["Flux-Producer-Id must be at most 128 characters"]);
  });

  it.each(["0", "-1", "abc", "01", "1.0", "1e3", " 1", "+1", "", "0x10", "9007199254740992", "12345678901234567"])(
    "rejects seq %j",
    (seq) => {
      const result = parse({ "flux-producer-id": "p", "flux-seq": seq });
      expect(result.success).toBe(false);
      expect(new Set(result.error?.issues.map((i) => i.path.join(".")))).toEqual(new Set(["flux-seq"]));
    },
  );

  it.each(["", "has space", "a/b", "é", "x".repeat(129)])("rejects producer id %j", (id) => {
    const result = parse({ "flux-producer-id": id, "flux-seq": "1" });
    expect(result.success).toBe(false);
    expect(new Set(result.error?.issues.map((i) => i.path.join(".")))).toEqual(new Set(["flux-producer-id"]));
  });
});

describe("parseFluxConfig", () => {
  const defaults = {
    maxBodyBytes: 1_048_576,
    maxBatchEvents: 10_000,
    dedupWindow: 1024,
    checkpointEvery: 512,
    coalesceLingerMs: 2,
    routingCacheMs: 1000,
    revocationCacheMs: 5000,
    maxKeyLength: 256,
    heartbeatMs: 500,
    watchProbeMs: 10_000,
    idleProbeMs: 1_800_000,
    idleAfterMs: 10_000,
    probeTimeoutMs: 250,
    failAfterMisses: 2,
    replicaTimeoutMs: 1000,
    suspectMs: 150,
    missSpacingMs: 250,
    seedPacing: 2.5,
    locationHints: [],
    enableFaults: false,
    boundOutputs: 10_000,
    idleIntervalMs: 100,
    retryMs: 250,
    maxRecords: 1_000,
  };

  it("uses the defaults when nothing is set and ignores unknown vars", () => {
    expect(parseFluxConfig({})).toEqual(defaults);
    expect(parseFluxConfig({ FLUX_API_TOKEN: "secret", OTHER: "1" })).toEqual(defaults);
  });

  it("coerces string vars into numbers under camel-case names", () => {
    expect(
      parseFluxConfig({
        FLUX_MAX_BODY_BYTES: "65536",
        FLUX_MAX_BATCH_EVENTS: "100",
        FLUX_DEDUP_WINDOW: "16",
        FLUX_CHECKPOINT_EVERY: "4",
        FLUX_ROUTING_CACHE_MS: "0",
        FLUX_REVOCATION_CACHE_MS: "250",
        FLUX_MAX_KEY_LENGTH: "65536",
      }),
    ).toEqual({ ...defaults, maxBodyBytes: 65536, maxBatchEvents: 100, dedupWindow: 16, checkpointEvery: 4, routingCacheMs: 0, revocationCacheMs: 250, maxKeyLength: 65536 });
  });

  it("parses location hints and the fault switch, and rejects unknown hints", () => {
    expect(parseFluxConfig({ FLUX_LOCATION_HINTS: "wnam, weur,", FLUX_ENABLE_FAULTS: "true" })).toMatchObject({
      locationHints: ["wnam", "weur"],
      enableFaults: true,
    });
    expect(() => parseFluxConfig({ FLUX_LOCATION_HINTS: "mars" })).toThrow();
    expect(() => parseFluxConfig({ FLUX_ENABLE_FAULTS: "yes" })).toThrow();
  });

  it("accepts numbers as well as strings", () => {
    expect(parseFluxConfig({ FLUX_CHECKPOINT_EVERY: 8 }).checkpointEvery).toBe(8);
  });

  it("reads the seed pacing as a decimal, 0 turning pauses off", () => {
    expect(parseFluxConfig({ FLUX_SEED_PACING: "0.5" }).seedPacing).toBe(0.5);
    expect(parseFluxConfig({ FLUX_SEED_PACING: "0" }).seedPacing).toBe(0);
    expect(parseFluxConfig({ FLUX_SEED_PACING: 4 }).seedPacing).toBe(4);
  });

  it.each([
    ["FLUX_MAX_BODY_BYTES", "abc"],
    ["FLUX_MAX_BODY_BYTES", "0"],
    ["FLUX_MAX_BODY_BYTES", String(100 * 1_048_576 + 1)],
    ["FLUX_MAX_BATCH_EVENTS", "1.5"],
    ["FLUX_MAX_BATCH_EVENTS", "1000001"],
    ["FLUX_DEDUP_WINDOW", "15"],
    ["FLUX_CHECKPOINT_EVERY", "0"],
    ["FLUX_ROUTING_CACHE_MS", "-1"],
    ["FLUX_ROUTING_CACHE_MS", "3600001"],
    ["FLUX_REVOCATION_CACHE_MS", "-1"],
    ["FLUX_REVOCATION_CACHE_MS", "60001"],
    ["FLUX_MAX_KEY_LENGTH", "Infinity"],
    ["FLUX_MAX_KEY_LENGTH", "65537"],
    ["FLUX_SEED_PACING", "-1"],
    ["FLUX_SEED_PACING", "1e3"],
    ["FLUX_SEED_PACING", ".5"],
    ["FLUX_SEED_PACING", "101"],
  ])("throws when %s is %j", (name, value) => {
    expect(() => parseFluxConfig({ [name]: value })).toThrow();
  });

  it.each(["FLUX_MAX_BODY_BYTES", "FLUX_MAX_BATCH_EVENTS", "FLUX_DEDUP_WINDOW", "FLUX_CHECKPOINT_EVERY", "FLUX_ROUTING_CACHE_MS", "FLUX_REVOCATION_CACHE_MS", "FLUX_MAX_KEY_LENGTH", "FLUX_SEED_PACING"])(
    "throws when %s is set to an empty string instead of reading it as 0",
    (name) => {
      expect(() => parseFluxConfig({ [name]: "" })).toThrow();
    },
  );
});

describe("DataflowSpecSchema: distinct, top-k, projection, ticks, operators", () => {
  it.each([
    ["distinct without a field", { d: { op: "distinct" } }, "aggregates.d.field"],
    ["distinct precision below 4", { d: { op: "distinct", field: "x", precision: 3 } }, "aggregates.d.precision"],
    ["distinct precision above 14", { d: { op: "distinct", field: "x", precision: 15 } }, "aggregates.d.precision"],
    ["topk without k", { t: { op: "topk", field: "x" } }, "aggregates.t.k"],
    ["topk k 0", { t: { op: "topk", field: "x", k: 0 } }, "aggregates.t.k"],
    ["topk k over 100", { t: { op: "topk", field: "x", k: 101 } }, "aggregates.t.k"],
    ["topk capacity below k", { t: { op: "topk", field: "x", k: 10, capacity: 5 } }, "aggregates.t.capacity"],
    ["topk capacity over 1000", { t: { op: "topk", field: "x", k: 10, capacity: 1001 } }, "aggregates.t.capacity"],
    ["topk with an empty weight", { t: { op: "topk", field: "x", k: 1, weight: "" } }, "aggregates.t.weight"],
  ])("rejects %s, naming it", (_what, aggregates, path) => {
    expect(issuePaths(specWith({ aggregates }))).toEqual([path]);
  });

  it("applies the defaults of distinct and keeps topk as given", () => {
    const spec = DataflowSpecSchema.parse(specWith({ aggregates: { d: { op: "distinct", field: "x" }, t: { op: "topk", field: "y", k: 3, weight: "b" } } }));
    expect(spec.aggregates).toEqual({ d: { op: "distinct", field: "x", precision: 12 }, t: { op: "topk", field: "y", k: 3, weight: "b" } });
  });

  it.each([
    ["a path with an empty step", { project: { user: "a..b" } }, "project.user"],
    ["a negative idleAdvanceMs", { idleAdvanceMs: -1 }, "idleAdvanceMs"],
    ["a fractional idleAdvanceMs", { idleAdvanceMs: 0.5 }, "idleAdvanceMs"],
  ])("rejects %s, naming it", (_what, patch, path) => {
    expect(issuePaths(specWith(patch))).toEqual([path]);
  });

  it("rejects an empty projection, and names the key it leaves out", () => {
    expect(issuePaths(specWith({ project: {} }))).toEqual(["project", "key"]);
  });

  it("requires window and aggregates unless an operator is named, and refuses both", () => {
    expect(issuePaths({ stream: "s", key: "k" })).toEqual(["window", "aggregates"]);
    const operator = { name: "heavy-hitters", params: { minBytes: 1 } };
    expect(DataflowSpecSchema.safeParse({ stream: "s", key: "k", operator }).success).toBe(true);
    expect(issuePaths({ ...minimal, operator })).toEqual(["window", "aggregates"]);
    expect(issuePaths({ stream: "s", key: "k", operator: { name: "heavy-hitters", params: { minBytes: 1, nested: { a: 1 } } } })).toEqual([
      "operator.params.nested",
    ]);
  });
});

describe("DataflowSpecSchema: sketch budget, and stored specs", () => {
  const distinct = (precision = 12) => ({ op: "distinct", field: "u", precision });
  const topk = (capacity: number) => ({ op: "topk", field: "u", k: 10, capacity });

  it("accepts a few sketches on tumbling or coarse sliding windows", () => {
    expect(DataflowSpecSchema.safeParse(specWith({ aggregates: { d: distinct(), t: topk(80) } })).success).toBe(true);
    expect(DataflowSpecSchema.safeParse(specWith({ window: { kind: "sliding", slideMs: 15_000 }, aggregates: { d: distinct(), t: topk(80) } })).success).toBe(true);
  });

  it("refuses more sketch updates per event than the budget, naming aggregates", () => {
    expect(issuePaths(specWith({ window: { kind: "sliding", slideMs: 1_000 }, aggregates: { d: distinct() } }))).toEqual(["aggregates"]);
    const many = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`d${i}`, distinct(4)]));
    expect(issuePaths(specWith({ aggregates: many }))).toEqual(["aggregates"]);
  });

  it("refuses sketches that would take too much memory per key", () => {
    const big = { t1: topk(1000), t2: topk(1000), t3: topk(1000), t4: topk(1000) };
    expect(DataflowSpecSchema.safeParse(specWith({ aggregates: big })).success).toBe(true);
    expect(issuePaths(specWith({ window: { kind: "sliding", slideMs: 30_000 }, aggregates: big }))).toEqual(["aggregates"]);
  });

  it("reads a stored spec whatever the registry holds now; only creation checks it", () => {
    const stored = { stream: "s", key: "k", operator: { name: "retired-operator", params: { x: 1 } }, partitions: 2, replication: 2 };
    expect(StoredDataflowSpecSchema.parse(stored)).toEqual(stored);
    expect(issuePaths(stored)).toEqual(["operator.name"]);
  });
});
