/**
 * The ingest answer (issue 11): per dataflow, records accepted, filtered and late, every
 * partition's late count (R=2 and R=1, 0 for a duplicate), and `duplicate` true only
 * when every partition the batch touched had applied it before.
 */
import { describe, expect, it } from "vitest";
import { routeEvents } from "../../shared/ingest/route-events.ts";
import { ingestAnswer } from "../../shared/router/ingest-answer.ts";
import { writeBatch } from "../../shared/router/write-batch.ts";
import { sendAlone } from "../../shared/router/write-partition.ts";
import { record, spec } from "../helpers/fixtures.ts";
import { MemoryCluster } from "../helpers/memory-cluster.ts";
import { keyGroupMapOf } from "../../shared/keygroups/key-groups.ts";

/** A dataflow on one partition that closes windows as soon as event time passes them. */
function setUp(replication: 1 | 2, filter?: unknown) {
  const s = spec({ partitions: 1, replication, window: { kind: "tumbling", sizeMs: 1000, allowedLatenessMs: 0 }, ...(filter ? { filter } : {}) });
  const rec = record("df", s);
  const cluster = new MemoryCluster({ dedupWindow: 64, checkpointEvery: 100 });
  cluster.setUp(rec);
  const post = async (seq: number, events: unknown[]) => {
    const routed = [{ record: rec, subBatches: routeEvents(s, events, 0, 256, keyGroupMapOf(rec)) }];
    const acks = await writeBatch(sendAlone(cluster), routed, { producer: "p", seq }, async () => [rec]);
    return ingestAnswer({ stream: "clicks", producer: "p", seq, events: events.length }, routed, acks);
  };
  return { post };
}

const ev = (ts: number, page = "a") => ({ page, ts, bytes: 1 });

describe("the ingest answer", () => {
  it.each([2, 1] as const)("counts late records per partition and dataflow (replication %i), and not again for a duplicate", async (replication) => {
    const { post } = setUp(replication);
    expect((await post(1, [ev(5000)])).dataflows[0]?.records).toEqual({ accepted: 1, filtered: 0, late: 0 });
    // Window [0, 1000) closed when event time reached 5000: two of these three are late.
    const answer = await post(2, [ev(100), ev(5100), ev(200)]);
    expect(answer.duplicate).toBe(false);
    expect(answer.dataflows[0]?.records).toEqual({ accepted: 3, filtered: 0, late: 2 });
    expect(answer.dataflows[0]?.partitions).toEqual([{ partition: 0, lsn: 2, replicated: replication === 2, duplicate: false, late: 2 }]);
    const resent = await post(2, [ev(100), ev(5100), ev(200)]);
    expect(resent.duplicate).toBe(true);
    expect(resent.dataflows[0]?.partitions[0]?.late).toBe(0);
    expect(resent.dataflows[0]?.records.late).toBe(0);
  });

  it("counts filtered events, and a batch filtered out entirely is not a duplicate (defect 2)", async () => {
    const { post } = setUp(2, { field: "bytes", op: "gt", value: 5 });
    const answer = await post(1, [ev(1), ev(2)]);
    expect(answer).toMatchObject({ events: 2, duplicate: false, dataflows: [{ dataflow: "df", partitions: [], records: { accepted: 0, filtered: 2, late: 0 } }] });
    const mixed = await post(2, [ev(3), { page: "b", ts: 4, bytes: 9 }]);
    expect(mixed.dataflows[0]?.records).toEqual({ accepted: 1, filtered: 1, late: 0 });
  });

  it("is a duplicate only when every touched partition had applied the batch", () => {
    const routed = [{ record: record("df", spec()), subBatches: new Map([[0, [["a", 1, 1, 1, 1, 1] as ["a", number, ...number[]]]]]) }];
    const ack = (duplicate: boolean) => ({ partition: 0, lsn: 1, replicated: true, duplicate, late: 0 });
    const answer = (acks: ReturnType<typeof ack>[]) => ingestAnswer({ stream: "s", producer: "p", seq: 1, events: 1 }, routed, [{ dataflow: "df", partitions: acks }]).duplicate;
    expect(answer([ack(true), ack(true)])).toBe(true);
    expect(answer([ack(true), ack(false)])).toBe(false);
    expect(answer([])).toBe(false);
  });
});
