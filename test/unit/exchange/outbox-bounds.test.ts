/** Outbox flow control (issue 27): lag per edge, the trim point, and the ingest refusal naming the edge. */
import { describe, expect, it } from "vitest";
import { unknownCursor, type EdgeCursor } from "../../../shared/exchange/exchange-types.ts";
import { edgeLag, ingestRefusal, trimPoint } from "../../../shared/exchange/outbox-bounds.ts";

const acked = (n: number | null): EdgeCursor => ({ ...unknownCursor(), acked: n });
const edges = (...cursors: EdgeCursor[]) => cursors.map((cursor, partition) => ({ dataflow: "global-top", partition, cursor }));

describe("outbox bounds", () => {
  it("measures lag from the acknowledgement, or the trim point when it is unknown", () => {
    expect(edgeLag(20, 5, acked(12))).toBe(8);
    expect(edgeLag(20, 5, acked(null))).toBe(15);
    expect(edgeLag(20, 5, acked(25))).toBe(0);
  });

  it("trims behind the lowest acknowledgement, and not at all while one is unknown", () => {
    expect(trimPoint(3, edges(acked(9), acked(7)))).toBe(7);
    expect(trimPoint(3, edges(acked(9), acked(null)))).toBe(3);
    expect(trimPoint(8, edges(acked(6)))).toBe(8);
    expect(trimPoint(3, [])).toBe(3);
  });

  it("refuses ingest naming the first edge at its bound", () => {
    const source = { dataflow: "top-pages", partition: 2 };
    expect(ingestRefusal(source, 10_500, 0, edges(acked(10_000), acked(500)), 10_000)).toBe(
      "edge top-pages/p2 → global-top/p1 is 10,000 outputs behind (bound 10,000): downstream partition unavailable",
    );
    expect(ingestRefusal(source, 10_500, 0, edges(acked(10_000), acked(501)), 10_000)).toBeNull();
    expect(ingestRefusal(source, 1_234_567, 0, edges(acked(null)), 1_000_000)).toMatch(/is 1,234,567 outputs behind \(bound 1,000,000\)/);
  });
});
