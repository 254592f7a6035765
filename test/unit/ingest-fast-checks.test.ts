/**
 * The ingest route's checks without zod (issue 12): `validProducerKey` and `isName` accept
 * exactly what their schemas accept, with the same values; anything else goes to the schema.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isName, NameSchema } from "../../shared/wire/dataflow-spec.ts";
import { ProducerHeadersSchema, validProducerKey } from "../../shared/wire/ingest.ts";

/** Strings near every boundary: the allowed characters and a few others, lengths around 128 and 16 digits. */
const producerLike = fc.oneof(
  fc.string({ unit: fc.constantFrom(..."aZ09_.:-"), minLength: 0, maxLength: 130 }),
  fc.string({ unit: fc.constantFrom(..."a9 /é\n\u0000"), maxLength: 6 }),
  fc.constantFrom("x".repeat(128), "x".repeat(129), ""),
);
const seqLike = fc.oneof(
  fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: 0, maxLength: 18 }),
  fc.bigInt({ min: 0n, max: 2n ** 60n }).map(String),
  fc.constantFrom("9007199254740991", "9007199254740992", "1e3", " 1", "1 ", "+1", "-1", "0x10", "01", "1.0", "٣"),
);

describe("validProducerKey", () => {
  it("agrees with ProducerHeadersSchema on every pair of headers", () => {
    fc.assert(
      fc.property(fc.option(producerLike, { nil: undefined }), fc.option(seqLike, { nil: undefined }), (producer, digits) => {
        const schema = ProducerHeadersSchema.safeParse({ "flux-producer-id": producer, "flux-seq": digits });
        const fast = validProducerKey(producer, digits);
        expect(fast).toEqual(schema.success ? { producer: schema.data["flux-producer-id"], seq: schema.data["flux-seq"] } : null);
      }),
      { numRuns: 5000 },
    );
  });

  it("accepts the largest safe seq and refuses the next", () => {
    expect(validProducerKey("p", "9007199254740991")).toEqual({ producer: "p", seq: 9007199254740991 });
    expect(validProducerKey("p", "9007199254740992")).toBeNull();
  });
});

describe("isName", () => {
  it("agrees with NameSchema", () => {
    const nameLike = fc.oneof(
      fc.string({ unit: fc.constantFrom(..."aZ09_.-"), maxLength: 66 }),
      fc.string({ unit: fc.constantFrom(..."a_.-/ é%\u0000"), maxLength: 5 }),
      fc.constantFrom("__proto__", "_a", "__", ".a", "-a", "a".repeat(64), "a".repeat(65), ""),
    );
    fc.assert(
      fc.property(nameLike, (name) => {
        expect(isName(name)).toBe(NameSchema.safeParse(name).success);
      }),
      { numRuns: 5000 },
    );
  });
});
