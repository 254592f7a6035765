/** U_i's delivery planning (issue 27): probes, group commit, bounds, watermarks, idle pacing and replies. */
import { describe, expect, it } from "vitest";
import { unknownCursor, type EdgeCursor, type OutboxView, type RoutedOutput } from "../../../shared/exchange/exchange-types.ts";
import { lastOutputSeq, nextDueAtMs, onDeliveryFailed, onDeliveryReply, planDeliveries } from "../../../shared/exchange/plan-delivery.ts";
import { watermarkStepOf } from "../../../shared/exchange/watermark-step.ts";

const LIMITS = { maxRecords: 3, idleIntervalMs: 100 };

/** Outputs trimmedThrough+1.. routed to the partitions given (null: nowhere). */
function outbox(partitions: (number | null)[], watermarkMs: number | null = 500, trimmedThrough = 0): OutboxView {
  const outputs = partitions.map((partition, k): RoutedOutput => {
    const outputSeq = trimmedThrough + 1 + k;
    return { outputSeq, partition, record: partition === null ? null : [`k${outputSeq}`, outputSeq] };
  });
  return { source: { dataflow: "up", partition: 1, partitions: 2 }, trimmedThrough, outputs, watermarkMs };
}
const at = (acked: number, extra: Partial<EdgeCursor> = {}): EdgeCursor => ({ ...unknownCursor(), acked, ...extra });

describe("planDeliveries", () => {
  it("probes an edge whose cursor is unknown, once", () => {
    const cursors = [unknownCursor()];
    const [planned] = planDeliveries(outbox([0]), cursors, 0, LIMITS);
    expect(planned?.delivery).toEqual({ source: { dataflow: "up", partition: 1, partitions: 2 }, fromSeq: 0, toSeq: 0, records: [], outputSeqs: [], watermarkMs: null });
    expect(planDeliveries(outbox([0]), cursors, 1, LIMITS)).toEqual([]);
  });

  it("sends each partition the records routed to it above its cursor, covering every output, with the watermark", () => {
    const planned = planDeliveries(outbox([0, 1, null, 0]), [at(0), at(2)], 0, LIMITS);
    expect(planned.map((p) => [p.partition, p.delivery.fromSeq, p.delivery.toSeq, p.delivery.outputSeqs, p.delivery.watermarkMs])).toEqual([
      [0, 0, 4, [1, 4], 500],
      [1, 2, 4, [], 500],
    ]);
  });

  it("bounds a delivery at maxRecords, ending it at its last record and claiming no watermark", () => {
    const [planned] = planDeliveries(outbox([0, 0, 1, 0, 0, 0]), [at(0)], 0, LIMITS);
    expect(planned?.delivery).toMatchObject({ fromSeq: 0, toSeq: 4, outputSeqs: [1, 2, 4], watermarkMs: null });
  });

  it("keeps one delivery in flight per edge; what comes meanwhile goes in the next", () => {
    const cursors = [at(0)];
    const first = planDeliveries(outbox([0]), cursors, 0, LIMITS)[0]?.delivery;
    expect(planDeliveries(outbox([0, 0, 0]), cursors, 1, LIMITS)).toEqual([]);
    if (!first) throw new Error("no delivery");
    expect(onDeliveryReply(cursors[0] as EdgeCursor, first, { status: "accepted", hw: 1 }, 0)).toEqual({ status: "ok" });
    expect(planDeliveries(outbox([0, 0, 0]), cursors, 2, LIMITS)[0]?.delivery).toMatchObject({ fromSeq: 1, toSeq: 3, outputSeqs: [2, 3] });
  });

  it("paces deliveries without records, and sends none that would change nothing", () => {
    const cursors = [at(2, { ackedWatermarkMs: 400, lastSentAtMs: 0 })];
    expect(planDeliveries(outbox([1, 1]), cursors, 50, LIMITS)).toEqual([]);
    expect(planDeliveries(outbox([1, 1], 400), cursors, 500, LIMITS)).toEqual([]);
    expect(planDeliveries(outbox([1, 1], 450), cursors, 500, LIMITS)[0]?.delivery).toMatchObject({ fromSeq: 2, toSeq: 2, records: [], watermarkMs: 450 });
  });

  it("sends a watermark on its own only when it reaches a new close step of the stage", () => {
    // The stage closes 100-ms windows: 430 and 480 are in one step (4), 510 in the next.
    const stepped = { ...LIMITS, watermarkStep: watermarkStepOf({ window: { kind: "tumbling", sizeMs: 100, allowedLatenessMs: 0 } }) };
    const cursors = [at(2, { ackedWatermarkMs: 430, lastSentAtMs: 0 })];
    expect(planDeliveries(outbox([1, 1], 480), cursors, 500, stepped)).toEqual([]);
    expect(nextDueAtMs(outbox([1, 1], 480), cursors[0] as EdgeCursor, 0, stepped)).toBeNull();
    expect(planDeliveries(outbox([1, 1], 510), cursors, 500, stepped)[0]?.delivery).toMatchObject({ toSeq: 2, records: [], watermarkMs: 510 });
  });

  it("paces a delivery that only covers outputs routed elsewhere: at once past coverAfterOutputs, else after coverAfterMs", () => {
    const paced = { ...LIMITS, coverAfterOutputs: 3, coverAfterMs: 1_000 };
    const cursors = [at(0, { ackedWatermarkMs: 500, lastSentAtMs: 0 })];
    // Two outputs for partition 1 only, the watermark already held: coverage waits.
    expect(planDeliveries(outbox([1, 1]), cursors, 200, paced)).toEqual([]);
    expect(nextDueAtMs(outbox([1, 1]), cursors[0] as EdgeCursor, 0, paced)).toBe(1_000);
    expect(planDeliveries(outbox([1, 1]), cursors, 1_000, paced)[0]?.delivery).toMatchObject({ fromSeq: 0, toSeq: 2, records: [] });
    const three = [at(0, { ackedWatermarkMs: 500, lastSentAtMs: 0 })];
    expect(planDeliveries(outbox([1, 1, 1]), three, 200, paced)[0]?.delivery).toMatchObject({ toSeq: 3 });
  });

  it("says no wake is needed while a delivery is in flight, records wait to be sent, or nothing is owed", () => {
    expect(nextDueAtMs(outbox([0]), { ...at(0), inFlight: { fromSeq: 0, toSeq: 1, watermarkMs: 500, sentAtMs: 0 } }, 0, LIMITS)).toBeNull();
    expect(nextDueAtMs(outbox([0]), at(0), 0, LIMITS)).toBeNull();
    expect(nextDueAtMs(outbox([0], 500), at(1, { ackedWatermarkMs: 500 }), 0, LIMITS)).toBeNull();
    expect(nextDueAtMs(outbox([0], 500), unknownCursor(), 0, LIMITS)).toBeNull();
  });

  it("gives nothing to an edge ahead of the outbox or behind its trim point", () => {
    expect(planDeliveries(outbox([0, 0]), [at(5)], 0, LIMITS)).toEqual([]);
    expect(planDeliveries(outbox([0, 0], 500, 4), [at(3)], 0, LIMITS)).toEqual([]);
    expect(lastOutputSeq(outbox([0, 0], 500, 4))).toBe(6);
  });
});

describe("replies", () => {
  it("resends from the downstream's hw after a gap, without taking its watermark as held", () => {
    const cursors = [at(4)];
    const sent = planDeliveries(outbox([0, 0, 0, 0, 0]), cursors, 0, LIMITS)[0]?.delivery;
    if (!sent) throw new Error("no delivery");
    expect(onDeliveryReply(cursors[0] as EdgeCursor, sent, { status: "gap", hw: 2 }, 0)).toEqual({ status: "ok" });
    expect(cursors[0]).toMatchObject({ acked: 2, ackedWatermarkMs: null, inFlight: null });
    expect(planDeliveries(outbox([0, 0, 0, 0, 0]), cursors, 1, LIMITS)[0]?.delivery).toMatchObject({ fromSeq: 2, outputSeqs: [3, 4, 5] });
  });

  it("ignores a reply to a delivery no longer in flight, and frees the edge when one fails", () => {
    const cursor = at(0);
    const sent = planDeliveries(outbox([0], 10), [cursor], 0, LIMITS)[0]?.delivery;
    if (!sent) throw new Error("no delivery");
    expect(onDeliveryReply(cursor, { ...sent, watermarkMs: 9 }, { status: "accepted", hw: 1 }, 0)).toEqual({ status: "stale" });
    onDeliveryFailed(cursor, sent);
    expect(cursor).toMatchObject({ acked: 0, inFlight: null });
    expect(onDeliveryReply(cursor, sent, { status: "accepted", hw: 1 }, 0)).toEqual({ status: "stale" });
  });

  it("reports a downstream that needs outputs already trimmed", () => {
    const cursor = at(6);
    const sent = planDeliveries(outbox([0, 0], 500, 6), [cursor], 0, LIMITS)[0]?.delivery;
    if (!sent) throw new Error("no delivery");
    expect(onDeliveryReply(cursor, sent, { status: "gap", hw: 3 }, 6)).toEqual({
      status: "lost",
      message: "downstream holds up/p1 through output 3, but outputs through 6 were trimmed",
    });
  });
});

describe("watermarkStepOf", () => {
  it("steps at every window end plus the allowed lateness; a custom operator tells every watermark apart", () => {
    const sliding = watermarkStepOf({ window: { kind: "sliding", sizeMs: 300, slideMs: 100, allowedLatenessMs: 50 } });
    expect([149, 150, 249, 250].map(sliding)).toEqual([0, 1, 1, 2]);
    const custom = watermarkStepOf({ operator: { name: "heavy-hitters", params: {} } });
    expect([1, 2].map(custom)).toEqual([1, 2]);
  });
});
