/**
 * Sliced checkpoints (issue 12): the operator state as a head plus slices, stored as rows
 * of pieces. Restoring them, in one go or one row at a time, must give exactly the state
 * that was checkpointed, whatever the slice and row sizes; anything incomplete must throw.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CheckpointBuilder, checkpointPieces, restoreCheckpoint } from "../../shared/checkpoint/checkpoint-pieces.ts";
import { piecesToRows } from "../../shared/checkpoint/checkpoint-rows.ts";
import { progressAfterChunk } from "../../shared/checkpoint/seed-progress.ts";
import { compileDataflow } from "../../shared/operators/compile.ts";
import type { DataflowSpec } from "../../shared/wire/dataflow-spec.ts";
import type { FluxRecord } from "../../shared/wire/window-result.ts";
import { ReplicaHost } from "../../shared/replica/replica-host.ts";
import { acceptOutputs, acceptSeedChunk, beginSeed, finishSeed, readSeedChunk } from "../../shared/replica/replica-seeding.ts";
import { MemoryReplicaStorage } from "../helpers/memory-replica-storage.ts";
import { spec } from "../helpers/fixtures.ts";

const sketchSpec = spec({
  window: { kind: "sliding", sizeMs: 1000, slideMs: 500, allowedLatenessMs: 0 },
  aggregates: { n: { op: "count" }, bytes: { op: "sum", field: "bytes" }, users: { op: "distinct", field: "user" } },
});
const hitters = spec({ aggregates: undefined, window: undefined, operator: { name: "heavy-hitters", params: { windowMs: 1000, minBytes: 10, destinationField: "dst", minDestinations: 2 } } });

/** A live operator of `s` fed `records` in batches of 7. */
function fed(s: DataflowSpec, records: FluxRecord[]) {
  const live = compileDataflow(s).bind();
  for (let i = 0; i < records.length; i += 7) live.process(records.slice(i, i + 7), () => {});
  return live;
}

const recordsOf = (s: DataflowSpec) =>
  fc.array(
    fc.tuple(fc.constantFrom("a", "b", "__proto__", "😀", "k1", "k2", "k3"), fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 0, max: 20 }), fc.constantFrom("x", "y", "z")),
    { maxLength: 80 },
  ).map((rows) => rows.map(([key, ts, bytes, user]): FluxRecord => (s === hitters ? [key, ts, bytes, user] : s === sketchSpec ? [key, ts, bytes, user] : [key, ts, bytes])));

const dedup = { p: { high: 2, applied: [1, 2], floor: 0 } };

describe("sliced checkpoints", () => {
  for (const [name, s] of [["window aggregates", spec()], ["sliding windows with sketches", sketchSpec], ["heavy-hitters", hitters]] as const) {
    it(`restore exactly the state they were taken of (${name}), in one go or row by row`, () => {
      fc.assert(
        fc.property(recordsOf(s), fc.integer({ min: 1, max: 6 }), fc.integer({ min: 3, max: 120 }), (records, perSlice, rowChars) => {
          const live = fed(s, records);
          const whole = JSON.parse(JSON.stringify(live.snapshot())) as unknown;
          const pieces = checkpointPieces(9, 4, dedup, live, perSlice);
          const rows = piecesToRows(pieces, rowChars);
          const restored = restoreCheckpoint(s, rows);
          expect(restored?.operator.snapshot()).toEqual(whole);
          expect([restored?.lsn, restored?.outputSeq, restored?.dedup]).toEqual([9, 4, dedup]);
          // Its size as the writer counted it (`checkpointChars` on the status page), whatever the rows' framing.
          expect(restored?.chars).toBe(pieces.reduce((n, piece) => n + piece.length, 0));
          // The same as a whole-state restore: both go on to emit the same results.
          const more: FluxRecord[] = records.map(([k, t, ...rest]) => [k, t + 3_000, ...rest]);
          const fromWhole = compileDataflow(s).bind(whole);
          const a: unknown[] = [];
          const b: unknown[] = [];
          restored?.operator.process(more, (r) => a.push(r));
          fromWhole.process(more, (r) => b.push(r));
          expect(a).toEqual(b);
        }),
        { numRuns: 60 },
      );
    });
  }

  it("refuse to finish with a slice missing, and refuse a slice too many", () => {
    const live = fed(spec(), [["a", 1, 1], ["b", 2, 2], ["c", 3, 3]]);
    const rows = piecesToRows(checkpointPieces(3, 0, {}, live, 1), 1_000);
    expect(rows).toHaveLength(4);
    const short = new CheckpointBuilder(spec());
    for (const row of rows.slice(0, -1)) short.push(row);
    expect(() => short.finish()).toThrow(/2 of 3 slices/);
    const long = new CheckpointBuilder(spec());
    for (const row of rows) long.push(row);
    expect(() => long.push(rows[3] ?? "")).toThrow(/more than the 3 slices/);
    expect(() => restoreCheckpoint(spec(), rows.slice(0, 2))).toThrow(/incomplete/);
  });

  it("refuse a malformed slice", () => {
    const live = fed(spec(), [["a", 1, 1]]);
    const [header] = checkpointPieces(1, 0, {}, live, 1);
    const builder = new CheckpointBuilder(spec());
    builder.push(`.${header ?? ""}`);
    expect(() => builder.push('.{"0":{"a":{"n":1}}}')).toThrow(/malformed accumulator/);
    expect(() => builder.push('.{"zero":{}}')).toThrow(/malformed window/);
  });

  it("write rows without sketches as columns: a list of keys and a list of numbers per window", () => {
    const [, ...slices] = checkpointPieces(3, 0, {}, fed(spec(), [["a", 1, 5], ["b", 2, 2], ["a", 1_500, 3]]), 5);
    expect(slices).toEqual(['[{"start":"0","stride":4,"keys":["a","b"],"values":[1,5,5,5,1,2,2,2]},{"start":"1000","stride":4,"keys":["a"],"values":[1,3,3,3]}]']);
    const sums = spec({ aggregates: { n: { op: "count" }, bytes: { op: "sum", field: "bytes" } } });
    expect(checkpointPieces(3, 0, {}, fed(sums, [["a", 1, 5]]), 5)[1]).toBe('[{"start":"0","stride":2,"keys":["a"],"values":[1,5]}]');
  });

  it("refuse a malformed column slice, changing nothing", () => {
    const restore = compileDataflow(spec()).restoreSliced({ maxTimeMs: 2, lateRecords: 0 }, true);
    // An extreme not set yet is null.
    restore.add(JSON.parse('[{"start":"0","stride":4,"keys":["a","c"],"values":[1,5,5,5,0,0,null,null]}]'));
    const good = '{"start":"0","stride":4,"keys":["b"],"values":[1,2,2,2]}';
    const malformed: [string, RegExp][] = [
      ['{"start":"0","stride":2,"keys":["b"],"values":[1,2]}', /layout/],
      ['{"start":"0","stride":4,"keys":["b"],"values":[1,2,2]}', /malformed columns/],
      ['{"start":"0","stride":4,"keys":["b"],"values":[1,null,2,2]}', /malformed value/],
      ['{"start":"0","stride":4,"keys":[7],"values":[1,2,2,2]}', /not a string/],
      ['{"start":"zero","stride":4,"keys":["b"],"values":[1,2,2,2]}', /window start/],
      ["7", /window start/],
    ];
    for (const [window, error] of malformed) expect(() => restore.add(JSON.parse(`[${good},${window}]`))).toThrow(error);
    expect(restore.finish().snapshot()).toEqual({ maxTimeMs: 2, lateRecords: 0, open: { 0: { $a: { n: 1, sum: [5], min: [5], max: [5] }, $c: { n: 0, sum: [0], min: [], max: [] } } } });
  });

  it("put an operator that does not slice its state in the header alone, restored whole", () => {
    const live = fed(spec(), [["a", 1, 1], ["b", 2, 2]]);
    const unsliced = { ...live, split: () => ({ head: live.snapshot(), slices: [], sliced: false }) };
    const pieces = checkpointPieces(2, 0, {}, unsliced, 1);
    expect(pieces).toHaveLength(1);
    expect(restoreCheckpoint(spec(), piecesToRows(pieces, 50))?.operator.snapshot()).toEqual(live.snapshot());
  });
});

describe("a fresh replica's seed progress", () => {
  const live = fed(spec(), [["a", 1, 1], ["b", 2, 2], ["c", 3, 3]]);
  const rows = piecesToRows(checkpointPieces(3, 0, {}, live, 1), 1_000);
  const send = (indexes: number[]) => indexes.reduce((p: ReturnType<typeof progressAfterChunk> | null, i) => progressAfterChunk(p, spec(), "c3", i, rows[i] ?? ""), null);

  it("restores chunks sent in order, and again from chunk 0 when the seed starts over", () => {
    const progress = send([0, 1, 1, 2, 0, 1, 2, 3]);
    expect(progress?.next).toBe(4);
    expect(progress?.builder?.finish().operator.snapshot()).toEqual(live.snapshot());
  });

  it("gives up the state on a gap or a snapshot it did not start, leaving it to the staged rows", () => {
    expect(send([0, 2])?.builder).toBeNull();
    expect(send([1, 2, 3])?.builder).toBeNull();
    expect(progressAfterChunk(send([0, 1]), spec(), "c9", 2, rows[2] ?? "").builder).toBeNull();
  });

  it("does not slice-restore a snapshot stored in the single-JSON format", () => {
    const body = JSON.stringify({ v: 1, lsn: 3, outputSeq: 0, operator: live.snapshot(), dedup: {} });
    expect(progressAfterChunk(null, spec(), "c3", 0, body.slice(0, 10)).builder).toBeNull();
  });
});

describe("installing a seed", () => {
  const tuning = { dedupWindow: 16, checkpointEvery: 1, checkpointSliceKeys: 2 };
  const noForwards = { replicate: () => Promise.reject(new Error("no standby")) };
  const identity = { name: "p", dataflowId: "df", partition: 0, spec: spec(), epoch: 1, version: 0 };

  /** A primary with 9 keys checkpointed in slices of 2, and what a fresh replica needs to be seeded from it. */
  async function survivor() {
    const host = new ReplicaHost(new MemoryReplicaStorage(), tuning, noForwards);
    host.init({ ...identity, role: "primary", hasStandby: false, create: true });
    const records = JSON.stringify(Array.from({ length: 9 }, (_, i) => [`k${i}`, 100 + i, i]));
    await host.write({ epoch: 1, batches: [{ producer: "w", seq: 1, records }] });
    const begun = beginSeed(host, 1);
    if (begun.status !== "ok") throw new Error(begun.status);
    return { host, begun };
  }

  for (const restartAt of [null, 2]) {
    it(restartAt === null ? "adopts the state restored chunk by chunk" : "restores from the staged rows when the replica restarted half-way", async () => {
      const { host, begun } = await survivor();
      expect(begun.chunks).toBeGreaterThanOrEqual(5);
      const storage = new MemoryReplicaStorage();
      let fresh = new ReplicaHost(storage, tuning, noForwards);
      for (let i = 0; i < begun.chunks; i++) {
        if (i === restartAt) fresh = new ReplicaHost(storage, tuning, noForwards);
        const chunk = readSeedChunk(host, 1, begun.id, i);
        if (chunk.status !== "ok") throw new Error(chunk.status);
        expect(acceptSeedChunk(fresh, begun.id, i, chunk.body, spec())).toEqual({ status: "ok" });
      }
      expect(fresh.seeding?.builder === null).toBe(restartAt !== null);
      const page = host.readOutputPage(1, 0, 100);
      if (page.status === "ok") acceptOutputs(fresh, page.outputs);
      const done = finishSeed(fresh, { ...identity, name: "q", epoch: 1, snapshotId: begun.id, chunks: begun.chunks, lsn: begun.lsn, outputSeq: begun.outputSeq });
      expect(done).toEqual({ status: "ok", lsn: begun.lsn });
      expect(fresh.load()?.operator.snapshot()).toEqual(host.load()?.operator.snapshot());
      // Installed as the rows it was sent: a restart loads the same state.
      expect(storage.checkpoint).toEqual(Array.from({ length: begun.chunks }, (_, i) => host.storage.readCheckpointChunk(begun.lsn, i)));
      expect(new ReplicaHost(storage, tuning, noForwards).load()?.operator.snapshot()).toEqual(host.load()?.operator.snapshot());
    });
  }
});
