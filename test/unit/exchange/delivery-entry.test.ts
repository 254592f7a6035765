/** Deliveries as log entries of a stage partition (issue 27): encoding, decoding, telling them from batches and ticks. */
import { describe, expect, it } from "vitest";
import { deliveryEntry, deliveryOf, deliveryProducer, isDeliveryEntry } from "../../../shared/exchange/delivery-entry.ts";
import { TICK_PRODUCER } from "../../../shared/replica/clock-ticks.ts";
import type { Delivery } from "../../../shared/wire/exchange.ts";
import type { LogEntry } from "../../../shared/wire/persisted.ts";

function delivery(overrides: Partial<Delivery> = {}): Delivery {
  return {
    source: { dataflow: "up", partition: 1, partitions: 3 },
    fromSeq: 2,
    toSeq: 6,
    records: [["a", 99, 4], ["b", 199, "x", 1.5]],
    outputSeqs: [3, 6],
    watermarkMs: 250,
    ...overrides,
  };
}

/** The entry `deliveryEntry` makes for `d`, at `lsn`. */
const logged = (d: Delivery, lsn = 7): LogEntry => ({ lsn, ...deliveryEntry(d) });

/** A delivery entry of producer `$from:up/1` whose records text is `body` as JSON. */
const withBody = (body: unknown): LogEntry => ({ lsn: 9, producer: "$from:up/1", seq: 1, records: JSON.stringify(body) });
const body = { p: 3, f: 2, t: 6, w: 250, s: [3, 6], r: [["a", 99, 4], ["b", 199, 1]] };

describe("deliveryEntry and deliveryOf", () => {
  it("encode a delivery as an entry of its source's producer with seq toSeq + 1, and decode it back", () => {
    const d = delivery();
    const entry = deliveryEntry(d);
    expect(entry.producer).toBe("$from:up/1");
    expect(entry.seq).toBe(7);
    expect(deliveryOf(logged(d))).toEqual(d);
  });

  it("round-trip a delivery without a watermark and one without records", () => {
    const probe = delivery({ fromSeq: 0, toSeq: 0, records: [], outputSeqs: [], watermarkMs: null });
    expect(deliveryOf(logged(probe))).toEqual(probe);
    expect(deliveryEntry(probe).seq).toBe(1);
    const coverage = delivery({ fromSeq: 4, toSeq: 9, records: [], outputSeqs: [], watermarkMs: 800 });
    expect(deliveryOf(logged(coverage))).toEqual(coverage);
  });

  it("round-trip a source whose dataflow name holds dots and dashes", () => {
    const d = delivery({ source: { dataflow: "site.top-pages.v2", partition: 12, partitions: 16 } });
    expect(deliveryEntry(d).producer).toBe("$from:site.top-pages.v2/12");
    expect(deliveryOf(logged(d)).source).toEqual({ dataflow: "site.top-pages.v2", partition: 12, partitions: 16 });
  });

  it("survive the entry's own trip through JSON (storage and forwarding)", () => {
    const entry = logged(delivery());
    const stored = JSON.parse(JSON.stringify(entry)) as LogEntry;
    expect(deliveryOf(stored)).toEqual(delivery());
  });
});

describe("isDeliveryEntry and deliveryProducer", () => {
  it("tell a delivery from a client's batch and from a clock tick", () => {
    expect(isDeliveryEntry({ producer: deliveryProducer({ dataflow: "up", partition: 0 }) })).toBe(true);
    expect(isDeliveryEntry({ producer: "client-7" })).toBe(false);
    expect(isDeliveryEntry({ producer: TICK_PRODUCER })).toBe(false);
    expect(isDeliveryEntry({ producer: "from:up/0" })).toBe(false);
  });

  it("name one producer per upstream partition", () => {
    expect(deliveryProducer({ dataflow: "up", partition: 0 })).toBe("$from:up/0");
    expect(deliveryProducer({ dataflow: "up", partition: 1 })).not.toBe(deliveryProducer({ dataflow: "up", partition: 0 }));
  });
});

describe("deliveryOf on malformed entries", () => {
  it("reads the well-formed body the malformed cases below start from", () => {
    expect(deliveryOf(withBody(body))).toMatchObject({ fromSeq: 2, toSeq: 6, outputSeqs: [3, 6] });
  });

  it("throws on records text that is not a delivery body", () => {
    expect(() => deliveryOf(withBody([["a", 1]]))).toThrow("log entry 9: not a delivery");
    expect(() => deliveryOf(withBody(null))).toThrow(/not a delivery/);
    expect(() => deliveryOf(withBody({ ...body, f: undefined }))).toThrow(/not a delivery/);
    expect(() => deliveryOf(withBody({ ...body, t: -1 }))).toThrow(/not a delivery/);
    expect(() => deliveryOf(withBody({ ...body, p: 1.5 }))).toThrow(/not a delivery/);
    expect(() => deliveryOf(withBody({ ...body, w: "250" }))).toThrow(/not a delivery/);
    expect(() => deliveryOf(withBody({ ...body, s: [3.5, 6] }))).toThrow(/not a delivery/);
    expect(() => deliveryOf({ lsn: 9, producer: "$from:up/1", seq: 1, records: "{not json" })).toThrow();
  });

  it("throws when a record is not a FluxRecord", () => {
    expect(() => deliveryOf(withBody({ ...body, r: [[1, 99, 4], ["b", 199]] }))).toThrow(/not a delivery/);
    expect(() => deliveryOf(withBody({ ...body, r: [["a"], ["b", 199]] }))).toThrow(/not a delivery/);
    expect(() => deliveryOf(withBody({ ...body, r: [["a", "99"], ["b", 199]] }))).toThrow(/not a delivery/);
    expect(() => deliveryOf(withBody({ ...body, r: [["a", 99, true], ["b", 199]] }))).toThrow(/not a delivery/);
  });

  it("throws when outputSeqs and records differ in length", () => {
    expect(() => deliveryOf(withBody({ ...body, s: [3] }))).toThrow(/not a delivery/);
    expect(() => deliveryOf(withBody({ ...body, s: [3, 6, 7] }))).toThrow(/not a delivery/);
  });

  it("throws when the producer names no partition, or no dataflow", () => {
    const at = (producer: string): LogEntry => ({ ...withBody(body), producer });
    expect(() => deliveryOf(at("$from:up"))).toThrow("log entry 9: not a delivery");
    expect(() => deliveryOf(at("$from:up/x"))).toThrow(/not a delivery/);
    expect(() => deliveryOf(at("$from:up/-1"))).toThrow(/not a delivery/);
    expect(() => deliveryOf(at("$from:up/1.5"))).toThrow(/not a delivery/);
    expect(() => deliveryOf(at("$from:/1"))).toThrow(/not a delivery/);
    // Only decimal digits name a partition: Number() would read these as 0 or 1.
    for (const loose of ["$from:up/", "$from:up/ 1", "$from:up/0x1", "$from:up/1e0"]) expect(() => deliveryOf(at(loose)), loose).toThrow(/not a delivery/);
  });

  it("throws on a body claiming its upstream has no partitions", () => {
    expect(() => deliveryOf(withBody({ ...body, p: 0 }))).toThrow(/not a delivery/);
  });
});
