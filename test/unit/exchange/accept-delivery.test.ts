/** D_j's acceptance of deliveries (issue 27): gaps, duplicates, filtered records, the effective watermark. */
import { describe, expect, it } from "vitest";
import { acceptDelivery, copyProgress, effectiveWatermark, expectedSources, sourceKeysOf } from "../../../shared/exchange/accept-delivery.ts";
import { DeliveryReplySchema, DeliverySchema, DownstreamProgressSchema, type Delivery, type DownstreamProgress } from "../../../shared/wire/exchange.ts";

const SOURCES = sourceKeysOf([{ dataflow: "up", partitions: 2 }]);

function delivery(partition: number, fromSeq: number, toSeq: number, seqs: number[], watermarkMs: number | null = null): Delivery {
  return { source: { dataflow: "up", partition, partitions: 2 }, fromSeq, toSeq, records: seqs.map((s) => [`k${s}`, s * 10]), outputSeqs: seqs, watermarkMs };
}

describe("acceptDelivery", () => {
  it("accepts the records above hw and raises hw to toSeq", () => {
    const progress: DownstreamProgress = {};
    expect(acceptDelivery(progress, delivery(0, 0, 5, [2, 4]), SOURCES)).toEqual({ status: "accepted", hw: 5, records: [["k2", 20], ["k4", 40]], outputSeqs: [2, 4], tickMs: null });
    expect(progress).toEqual({ "up/0": { hw: 5, watermarkMs: null, partitions: 2 } });
  });

  it("keeps only the records above hw of a delivery that overlaps what it holds", () => {
    const progress: DownstreamProgress = { "up/0": { hw: 3, watermarkMs: null, partitions: 2 } };
    const result = acceptDelivery(progress, delivery(0, 1, 6, [2, 3, 5, 6]), SOURCES);
    expect(result).toMatchObject({ status: "accepted", hw: 6, outputSeqs: [5, 6] });
  });

  it("answers gap with its hw to a delivery starting above it", () => {
    const progress: DownstreamProgress = { "up/0": { hw: 3, watermarkMs: 7, partitions: 2 } };
    expect(acceptDelivery(progress, delivery(0, 4, 9, [5]), SOURCES)).toEqual({ status: "gap", hw: 3 });
    expect(progress["up/0"]).toEqual({ hw: 3, watermarkMs: 7, partitions: 2 });
  });

  it("calls a redelivery, a probe and a lower watermark duplicates", () => {
    const progress: DownstreamProgress = { "up/0": { hw: 6, watermarkMs: 50, partitions: 2 } };
    expect(acceptDelivery(progress, delivery(0, 2, 6, [3, 6], 40), SOURCES)).toEqual({ status: "duplicate", hw: 6 });
    expect(acceptDelivery(progress, delivery(0, 0, 0, []), SOURCES)).toEqual({ status: "duplicate", hw: 6 });
    expect(acceptDelivery(progress, delivery(0, 6, 6, [], 50), SOURCES)).toEqual({ status: "duplicate", hw: 6 });
  });

  it("accepts a watermark-only delivery that raises the watermark, without records", () => {
    const progress: DownstreamProgress = { "up/0": { hw: 6, watermarkMs: 50, partitions: 2 }, "up/1": { hw: 1, watermarkMs: 80, partitions: 2 } };
    expect(acceptDelivery(progress, delivery(0, 6, 6, [], 90), SOURCES)).toEqual({ status: "accepted", hw: 6, records: [], outputSeqs: [], tickMs: 80 });
  });

  it("ticks only when the minimum over every source rises", () => {
    const progress: DownstreamProgress = {};
    expect(acceptDelivery(progress, delivery(0, 0, 0, [], 100), SOURCES)).toMatchObject({ tickMs: null });
    expect(effectiveWatermark(progress, SOURCES)).toBeNull();
    expect(acceptDelivery(progress, delivery(1, 0, 0, [], 60), SOURCES)).toMatchObject({ tickMs: 60 });
    expect(acceptDelivery(progress, delivery(0, 0, 0, [], 120), SOURCES)).toMatchObject({ status: "accepted", tickMs: null });
    expect(acceptDelivery(progress, delivery(1, 0, 0, [], 130), SOURCES)).toMatchObject({ tickMs: 120 });
  });

  it("has no effective watermark without sources", () => {
    expect(effectiveWatermark({}, [])).toBeNull();
  });

  it("refuses a source it does not read, and throws on a malformed delivery", () => {
    expect(acceptDelivery({}, { ...delivery(0, 0, 1, [1]), source: { dataflow: "other", partition: 0, partitions: 1 } }, SOURCES)).toEqual({ status: "unknown-source", source: "other/0" });
    expect(() => acceptDelivery({}, delivery(0, 0, 3, [2, 2]), SOURCES)).toThrow(/malformed delivery from up\/0/);
    expect(() => acceptDelivery({}, delivery(0, 2, 3, [1]), SOURCES)).toThrow(/malformed/);
    expect(() => acceptDelivery({}, delivery(0, 0, 3, [4]), SOURCES)).toThrow(/malformed/);
    expect(() => acceptDelivery({}, { ...delivery(0, 0, 3, [1]), records: [] }, SOURCES)).toThrow(/malformed/);
  });

  it("persists progress and deliveries as JSON their schemas read back", () => {
    const progress: DownstreamProgress = {};
    const sent = delivery(1, 0, 4, [1, 4], 33);
    acceptDelivery(progress, DeliverySchema.parse(JSON.parse(JSON.stringify(sent))), SOURCES);
    expect(DownstreamProgressSchema.parse(JSON.parse(JSON.stringify(progress)))).toEqual({ "up/1": { hw: 4, watermarkMs: 33, partitions: 2 } });
    expect(DeliveryReplySchema.safeParse({ status: "accepted", hw: -1 }).success).toBe(false);
  });
});

describe("expectedSources", () => {
  const at = (partitions: number, hw = 0): DownstreamProgress[string] => ({ hw, watermarkMs: null, partitions });

  it("stands an upstream not heard from as one placeholder, so the watermark waits for it", () => {
    expect(expectedSources(["up"], {})).toEqual(["up/?"]);
    const progress: DownstreamProgress = { "a/0": { hw: 1, watermarkMs: 500, partitions: 1 } };
    const sources = expectedSources(["a", "b"], progress);
    expect(sources).toEqual(["a/0", "b/?"]);
    expect(effectiveWatermark(progress, sources)).toBeNull();
  });

  it("lists every partition of an upstream as many as its progress said, the most any entry said", () => {
    expect(expectedSources(["up"], { "up/1": at(3) })).toEqual(["up/0", "up/1", "up/2"]);
    expect(expectedSources(["up"], { "up/0": at(2), "up/3": at(4) })).toEqual(["up/0", "up/1", "up/2", "up/3"]);
  });

  it("learns partition counts from the delivery too, never fewer than progress said", () => {
    const from = delivery(1, 0, 0, []);
    expect(expectedSources(["up"], {}, from)).toEqual(["up/0", "up/1"]);
    expect(expectedSources(["up"], { "up/0": at(3) }, from)).toEqual(["up/0", "up/1", "up/2"]);
    expect(expectedSources(["other", "up"], {}, from)).toEqual(["other/?", "up/0", "up/1"]);
  });

  it("keeps the order of from, reads names with dots and dashes, and ignores progress of dataflows it does not read", () => {
    const progress: DownstreamProgress = { "site.top-pages/1": at(2), "gone/0": at(5) };
    expect(expectedSources(["z", "site.top-pages"], progress)).toEqual(["z/?", "site.top-pages/0", "site.top-pages/1"]);
  });
});

describe("copyProgress", () => {
  it("copies progress so that changing the copy, or accepting into it, leaves the original alone", () => {
    const original: DownstreamProgress = { "up/0": { hw: 3, watermarkMs: 40, partitions: 2 } };
    const copy = copyProgress(original);
    expect(copy).toEqual(original);
    expect(copy["up/0"]).not.toBe(original["up/0"]);
    acceptDelivery(copy, delivery(0, 3, 5, [5], 90), SOURCES);
    acceptDelivery(copy, delivery(1, 0, 2, [1]), SOURCES);
    expect(original).toEqual({ "up/0": { hw: 3, watermarkMs: 40, partitions: 2 } });
    expect(copy).toEqual({ "up/0": { hw: 5, watermarkMs: 90, partitions: 2 }, "up/1": { hw: 2, watermarkMs: null, partitions: 2 } });
  });

  it("copies empty progress as empty", () => {
    expect(copyProgress({})).toEqual({});
  });
});
