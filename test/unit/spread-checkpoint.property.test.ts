/**
 * Checkpoints spread over steps (issue 12, `shared/replica/checkpoint-steps.ts`): random
 * writes, probes and restarts interleaved with checkpoints of several slices. Whenever
 * storage names a checkpoint as of LSN L, its rows restore exactly the state a fresh
 * operator reaches over the log up to L (copy-on-write kept the values as of L), and a
 * restarted replica (its checkpoint in progress lost) reaches exactly the reference state.
 * Also the plain and sketch aggregates and heavy-hitters, with windows that close meanwhile.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { restoreCheckpoint } from "../../shared/checkpoint/checkpoint-pieces.ts";
import { compileDataflow } from "../../shared/operators/compile.ts";
import { ReplicaHost } from "../../shared/replica/replica-host.ts";
import type { ForwardPort } from "../../shared/replica/forwarder.ts";
import type { DataflowSpec } from "../../shared/wire/dataflow-spec.ts";
import type { FluxRecord } from "../../shared/wire/window-result.ts";
import { spec } from "../helpers/fixtures.ts";
import { MemoryReplicaStorage } from "../helpers/memory-replica-storage.ts";

const noForwards: ForwardPort = { replicate: () => Promise.reject(new Error("no standby")) };
const specs: Record<string, DataflowSpec> = {
  window: spec({ window: { kind: "tumbling", sizeMs: 1000, allowedLatenessMs: 500 } }),
  sketches: spec({
    window: { kind: "sliding", sizeMs: 1000, slideMs: 500, allowedLatenessMs: 0 },
    aggregates: { n: { op: "count" }, bytes: { op: "sum", field: "bytes" }, users: { op: "distinct", field: "user" }, top: { op: "topk", field: "user", k: 2 } },
  }),
  hitters: spec({ aggregates: undefined, window: undefined, operator: { name: "heavy-hitters", params: { windowMs: 1000, minBytes: 10, destinationField: "dst", minDestinations: 2 } } }),
};

type Op = { kind: "write"; records: [string, number, number, string][] } | { kind: "probe" } | { kind: "restart" };
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.array(fc.tuple(fc.constantFrom("a", "b", "c", "d", "e", "f", "g", "__proto__"), fc.integer({ min: 0, max: 6_000 }), fc.integer({ min: 0, max: 9 }), fc.constantFrom("x", "y", "z")), { minLength: 1, maxLength: 12 }).map((records) => ({ kind: "write" as const, records })) },
  { weight: 2, arbitrary: fc.constant({ kind: "probe" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "restart" as const }) },
);

describe("checkpoints spread over steps", () => {
  let spread = 0;
  for (const [name, s] of Object.entries(specs)) {
    it(`restore exactly the state as of their LSN (${name})`, () => {
      const recordOf = ([key, ts, bytes, user]: [string, number, number, string]): FluxRecord => (name === "window" ? [key, ts, bytes] : [key, ts, bytes, user]);
      fc.assert(
        fc.property(fc.array(opArb, { maxLength: 60 }), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 3 }), (ops, checkpointEvery, checkpointSliceKeys) => {
          const tuning = { dedupWindow: 64, checkpointEvery, checkpointSliceKeys };
          const storage = new MemoryReplicaStorage();
          let host = new ReplicaHost(storage, tuning, noForwards);
          host.init({ name: "r", dataflowId: "df", partition: 0, spec: s, role: "primary", epoch: 1, hasStandby: false, standby: null, version: 1, create: true });
          const reference = compileDataflow(s).bind();
          // The reference operator's snapshot after each LSN (index = LSN).
          const asOf: string[] = [JSON.stringify(reference.snapshot())];
          let seq = 0;
          for (const op of ops) {
            if (op.kind === "restart") host = new ReplicaHost(storage, tuning, noForwards);
            else if (op.kind === "probe") host.probe();
            else {
              seq += 1;
              void host.write({ epoch: 1, batches: [{ producer: "p", seq, records: JSON.stringify(op.records.map(recordOf)) }] });
              reference.process(op.records.map(recordOf), () => {});
              asOf.push(JSON.stringify(reference.snapshot()));
            }
            if (host.load()?.spread) spread += 1;
            const lsn = storage.meta?.checkpointLsn ?? 0;
            const restored = restoreCheckpoint(s, storage.checkpoint);
            if (restored) {
              expect(restored.lsn).toBe(lsn);
              expect(JSON.stringify(restored.operator.snapshot())).toBe(asOf[lsn]);
            }
          }
          // A restart loads the stored checkpoint plus the log: exactly the reference state.
          const reloaded = new ReplicaHost(storage, tuning, noForwards).load();
          expect(JSON.stringify(reloaded?.operator.snapshot())).toBe(asOf[seq]);
          expect(JSON.stringify(host.load()?.operator.snapshot())).toBe(asOf[seq]);
        }),
        { numRuns: 150 },
      );
    });
  }

  it("were spread over several steps in those runs", () => {
    expect(spread).toBeGreaterThan(50);
  });
});
