/**
 * Checkpoints written before the compact window state (issue 12) restore unchanged: the
 * rows below are what the object-per-key state of session 6 wrote (format 2, and the whole
 * snapshot a format-1 checkpoint holds), for the records in `RECORDS`. The compact state
 * keeps that JSON format for rows with sketches, so it also writes the same rows byte for
 * byte; rows without sketches it writes as columns (`window-slice-columns.ts`), and the
 * accumulator slices earlier deploys wrote for them still restore.
 */
import { describe, expect, it } from "vitest";
import { checkpointPieces, restoreCheckpoint } from "../../shared/checkpoint/checkpoint-pieces.ts";
import { piecesToRows } from "../../shared/checkpoint/checkpoint-rows.ts";
import { compileDataflow } from "../../shared/operators/compile.ts";
import type { LiveOperator } from "../../shared/operators/operator.ts";
import type { FluxRecord, WindowResult } from "../../shared/wire/window-result.ts";
import { chunkText } from "../../shared/checkpoint/chunk-text.ts";
import { spec } from "../helpers/fixtures.ts";

const SPEC = spec({
  window: { kind: "sliding", sizeMs: 1000, slideMs: 500, allowedLatenessMs: 0 },
  aggregates: {
    n: { op: "count" },
    bytes: { op: "sum", field: "bytes" },
    lo: { op: "min", field: "bytes" },
    hi: { op: "max", field: "bytes" },
    mean: { op: "avg", field: "bytes" },
    users: { op: "distinct", field: "user", precision: 4 },
    top: { op: "topk", field: "user", k: 2, capacity: 3 },
  },
});
const RECORDS: FluxRecord[] = [
  ["a", 100, 5, "x"],
  ["__proto__", 200, -1.5, "y"],
  ["b", 700, 3, "x"],
  ["a", 800, 2, "z"],
  ["😀", 900, 1e15, "x"],
];
const DEDUP = { p: { high: 2, applied: [1, 2], floor: 0 } };

/** Format 2, 2 entries per slice, as the object-per-key state wrote it (`checkpointPieces(9, 4, DEDUP, live, 2)`). */
const FORMAT_2_ROWS = [
  '.{"v":2,"lsn":9,"outputSeq":4,"dedup":{"p":{"high":2,"applied":[1,2],"floor":0}},"head":{"maxTimeMs":900,"lateRecords":0},"sliced":true,"slices":4}',
  '.{"0":{"$a":{"n":2,"sum":[7],"min":[2],"max":[5],"hll":[{"p":4,"r":"2001000000000000"}],"top":[{"cap":3,"total":2,"items":[["x",1,0],["z",1,0]],"at":{"$x":0,"$z":1}}]},"$__proto__":{"n":1,"sum":[-1.5],"min":[-1.5],"max":[-1.5],"hll":[{"p":4,"r":[882096962]}],"top":[{"cap":3,"total":1,"items":[["y",1,0]],"at":{"$y":0}}]}}}',
  '.{"0":{"$b":{"n":1,"sum":[3],"min":[3],"max":[3],"hll":[{"p":4,"r":[492228547]}],"top":[{"cap":3,"total":1,"items":[["x",1,0]],"at":{"$x":0}}]},"$😀":{"n":1,"sum":[1000000000000000],"min":[1000000000000000],"max":[1000000000000000],"hll":[{"p":4,"r":[492228547]}],"top":[{"cap":3,"total":1,"items":[["x",1,0]],"at":{"$x":0}}]}}}',
  '.{"500":{"$b":{"n":1,"sum":[3],"min":[3],"max":[3],"hll":[{"p":4,"r":[492228547]}],"top":[{"cap":3,"total":1,"items":[["x",1,0]],"at":{"$x":0}}]},"$a":{"n":1,"sum":[2],"min":[2],"max":[2],"hll":[{"p":4,"r":[55693954]}],"top":[{"cap":3,"total":1,"items":[["z",1,0]],"at":{"$z":0}}]}}}',
  '.{"500":{"$😀":{"n":1,"sum":[1000000000000000],"min":[1000000000000000],"max":[1000000000000000],"hll":[{"p":4,"r":[492228547]}],"top":[{"cap":3,"total":1,"items":[["x",1,0]],"at":{"$x":0}}]}}}',
];

/** The operator snapshot a format-1 checkpoint of the same state held. */
const FORMAT_1_OPERATOR = '{"maxTimeMs":900,"lateRecords":0,"open":{"0":{"$a":{"n":2,"sum":[7],"min":[2],"max":[5],"hll":[{"p":4,"r":"2001000000000000"}],"top":[{"cap":3,"total":2,"items":[["x",1,0],["z",1,0]],"at":{"$x":0,"$z":1}}]},"$__proto__":{"n":1,"sum":[-1.5],"min":[-1.5],"max":[-1.5],"hll":[{"p":4,"r":[882096962]}],"top":[{"cap":3,"total":1,"items":[["y",1,0]],"at":{"$y":0}}]},"$b":{"n":1,"sum":[3],"min":[3],"max":[3],"hll":[{"p":4,"r":[492228547]}],"top":[{"cap":3,"total":1,"items":[["x",1,0]],"at":{"$x":0}}]},"$😀":{"n":1,"sum":[1000000000000000],"min":[1000000000000000],"max":[1000000000000000],"hll":[{"p":4,"r":[492228547]}],"top":[{"cap":3,"total":1,"items":[["x",1,0]],"at":{"$x":0}}]}},"500":{"$b":{"n":1,"sum":[3],"min":[3],"max":[3],"hll":[{"p":4,"r":[492228547]}],"top":[{"cap":3,"total":1,"items":[["x",1,0]],"at":{"$x":0}}]},"$a":{"n":1,"sum":[2],"min":[2],"max":[2],"hll":[{"p":4,"r":[55693954]}],"top":[{"cap":3,"total":1,"items":[["z",1,0]],"at":{"$z":0}}]},"$😀":{"n":1,"sum":[1000000000000000],"min":[1000000000000000],"max":[1000000000000000],"hll":[{"p":4,"r":[492228547]}],"top":[{"cap":3,"total":1,"items":[["x",1,0]],"at":{"$x":0}}]}}}}';

/** Open results of that state, as it served them. */
const OPEN_RESULTS = JSON.parse('[{"key":"__proto__","windowStartMs":0,"windowEndMs":1000,"values":{"n":1,"bytes":-1.5,"lo":-1.5,"hi":-1.5,"mean":-1.5,"users":1,"top":[{"value":"y","count":1,"error":0}]},"closed":false},{"key":"a","windowStartMs":0,"windowEndMs":1000,"values":{"n":2,"bytes":7,"lo":2,"hi":5,"mean":3.5,"users":2,"top":[{"value":"x","count":1,"error":0},{"value":"z","count":1,"error":0}]},"closed":false},{"key":"b","windowStartMs":0,"windowEndMs":1000,"values":{"n":1,"bytes":3,"lo":3,"hi":3,"mean":3,"users":1,"top":[{"value":"x","count":1,"error":0}]},"closed":false},{"key":"😀","windowStartMs":0,"windowEndMs":1000,"values":{"n":1,"bytes":1000000000000000,"lo":1000000000000000,"hi":1000000000000000,"mean":1000000000000000,"users":1,"top":[{"value":"x","count":1,"error":0}]},"closed":false},{"key":"a","windowStartMs":500,"windowEndMs":1500,"values":{"n":1,"bytes":2,"lo":2,"hi":2,"mean":2,"users":1,"top":[{"value":"z","count":1,"error":0}]},"closed":false},{"key":"b","windowStartMs":500,"windowEndMs":1500,"values":{"n":1,"bytes":3,"lo":3,"hi":3,"mean":3,"users":1,"top":[{"value":"x","count":1,"error":0}]},"closed":false},{"key":"😀","windowStartMs":500,"windowEndMs":1500,"values":{"n":1,"bytes":1000000000000000,"lo":1000000000000000,"hi":1000000000000000,"mean":1000000000000000,"users":1,"top":[{"value":"x","count":1,"error":0}]},"closed":false}]') as WindowResult[];

/** What the restored operator emits for later records, against the operator that was checkpointed. */
function continuesAsTheOriginal(restored: LiveOperator): void {
  const original = compileDataflow(SPEC).bind();
  original.process(RECORDS, () => {});
  const later: FluxRecord[] = [["a", 1_200, 4, "w"], ["c", 1_300, 1, "x"], ["z", 3_000, 0, "y"]];
  const a: WindowResult[] = [];
  const b: WindowResult[] = [];
  restored.process(later, (r) => a.push(r));
  original.process(later, (r) => b.push(r));
  expect(a.length).toBeGreaterThan(0);
  expect(a).toEqual(b);
}

describe("checkpoints of the object-per-key state", () => {
  it("restore from format 2 rows with the results that state served", () => {
    const restored = restoreCheckpoint(SPEC, FORMAT_2_ROWS);
    expect([restored?.lsn, restored?.outputSeq, restored?.dedup]).toEqual([9, 4, DEDUP]);
    expect(restored?.operator.openResults({})).toEqual(OPEN_RESULTS);
    expect(JSON.stringify(restored?.operator.snapshot())).toBe(FORMAT_1_OPERATOR);
    if (restored) continuesAsTheOriginal(restored.operator);
  });

  it("restore from a format 1 checkpoint cut into rows anywhere", () => {
    const body = JSON.stringify({ v: 1, lsn: 9, outputSeq: 4, operator: JSON.parse(FORMAT_1_OPERATOR), dedup: DEDUP });
    const restored = restoreCheckpoint(SPEC, chunkText(body, 97));
    expect(restored?.operator.openResults({})).toEqual(OPEN_RESULTS);
    expect(JSON.stringify(restored?.operator.snapshot())).toBe(FORMAT_1_OPERATOR);
    if (restored) continuesAsTheOriginal(restored.operator);
  });

  it("are what the compact state writes for the same records, byte for byte", () => {
    const live = compileDataflow(SPEC).bind();
    live.process(RECORDS, () => {});
    expect(piecesToRows(checkpointPieces(9, 4, DEDUP, live, 2), 10_000)).toEqual(FORMAT_2_ROWS);
    expect(JSON.stringify(live.snapshot())).toBe(FORMAT_1_OPERATOR);
    // A spread checkpoint's cursor writes the same slices.
    const cursor = live.cursor(2);
    const slices: string[] = [];
    for (let slice = cursor?.next() ?? null; slice !== null; slice = cursor?.next() ?? null) slices.push(slice);
    expect([cursor?.head, cursor?.slices]).toEqual([{ maxTimeMs: 900, lateRecords: 0 }, 4]);
    expect(slices.map((slice) => `.${slice}`)).toEqual(FORMAT_2_ROWS.slice(1));
  });

  it("hold no close under way, and closedThrough only in checkpoints taken while one is (issue 12)", () => {
    expect(restoreCheckpoint(SPEC, FORMAT_2_ROWS)?.operator.closing()).toBe(false);
    const live = compileDataflow(SPEC).bind();
    live.process(RECORDS, () => {}, 3);
    const before: WindowResult[] = [];
    live.process([["c", 1_600, 1, "x"]], (r) => before.push(r), 3);
    expect([before.length, live.closing()]).toEqual([3, true]);
    const rows = piecesToRows(checkpointPieces(10, 7, DEDUP, live, 2), 10_000);
    expect(rows[0]).toContain('"head":{"maxTimeMs":1600,"lateRecords":0,"closedThrough":{"windowStartMs":0,"key":"b"}}');
    const restored = restoreCheckpoint(SPEC, rows);
    const whole = compileDataflow(SPEC).bind();
    const expected: WindowResult[] = [];
    whole.process(RECORDS, () => {});
    whole.process([["c", 1_600, 1, "x"]], (r) => expected.push(r));
    const after: WindowResult[] = [];
    while (restored?.operator.closing()) restored.operator.process([], (r) => after.push(r), 3);
    expect([...before, ...after]).toEqual(expected);
    expect(JSON.stringify(restored?.operator.snapshot())).not.toContain("closedThrough");
  });
});

/** Format 2 accumulator slices of an aggregate without sketches, as deploys before the column slices wrote them (2 entries per slice). */
const NO_SKETCHES = spec({
  window: { kind: "sliding", sizeMs: 1000, slideMs: 500, allowedLatenessMs: 0 },
  aggregates: { n: { op: "count" }, bytes: { op: "sum", field: "bytes" }, lo: { op: "min", field: "bytes" }, hi: { op: "max", field: "bytes" }, mean: { op: "avg", field: "bytes" } },
});
const ACCUMULATOR_ROWS = [
  '.{"v":2,"lsn":9,"outputSeq":4,"dedup":{"p":{"high":2,"applied":[1,2],"floor":0}},"head":{"maxTimeMs":900,"lateRecords":0},"sliced":true,"slices":4}',
  '.{"0":{"$a":{"n":2,"sum":[7],"min":[2],"max":[5]},"$__proto__":{"n":1,"sum":[-1.5],"min":[-1.5],"max":[-1.5]}}}',
  '.{"0":{"$b":{"n":1,"sum":[3],"min":[3],"max":[3]},"$😀":{"n":1,"sum":[1000000000000000],"min":[1000000000000000],"max":[1000000000000000]}}}',
  '.{"500":{"$b":{"n":1,"sum":[3],"min":[3],"max":[3]},"$a":{"n":1,"sum":[2],"min":[2],"max":[2]}}}',
  '.{"500":{"$😀":{"n":1,"sum":[1000000000000000],"min":[1000000000000000],"max":[1000000000000000]}}}',
];

describe("accumulator slices of rows without sketches", () => {
  it("restore to the state they were taken of, which now writes them as columns", () => {
    const live = compileDataflow(NO_SKETCHES).bind();
    live.process(RECORDS.map((r): FluxRecord => r.slice(0, 3) as FluxRecord), () => {});
    const restored = restoreCheckpoint(NO_SKETCHES, ACCUMULATOR_ROWS);
    expect([restored?.lsn, restored?.outputSeq, restored?.dedup]).toEqual([9, 4, DEDUP]);
    expect(restored?.operator.snapshot()).toEqual(live.snapshot());
    expect(restored?.operator.openResults({})).toEqual(live.openResults({}));
    const rows = piecesToRows(checkpointPieces(9, 4, DEDUP, live, 2), 10_000);
    expect(rows[0]).toBe(ACCUMULATOR_ROWS[0]);
    expect(rows[1]).toBe('.[{"start":"0","stride":4,"keys":["a","__proto__"],"values":[2,7,2,5,1,-1.5,-1.5,-1.5]}]');
  });
});
