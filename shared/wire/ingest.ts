/** HTTP-level shapes of ingest: the producer headers and the success response. */
import * as z from "zod";

/** A valid `Flux-Producer-Id`, whole: 1 to 128 letters, digits, '_', '.', ':' or '-'. */
const PRODUCER_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
/** A `Flux-Seq` in decimal; it is valid if its number is also at most 2^53 - 1. */
const SEQ_DIGITS = /^[1-9][0-9]{0,15}$/;

/** `Flux-Producer-Id` and `Flux-Seq`: the batch's idempotency key (these messages name what is wrong). */
export const ProducerHeadersSchema = z.object({
  "flux-producer-id": z
    .string({ error: "Flux-Producer-Id header is required" })
    .min(1, "Flux-Producer-Id must not be empty")
    .max(128, "Flux-Producer-Id must be at most 128 characters")
    .regex(/^[A-Za-z0-9_.:-]+$/, "Flux-Producer-Id: use letters, digits, '_', '.', ':' or '-'"),
  "flux-seq": z
    .string({ error: "Flux-Seq header is required" })
    .regex(SEQ_DIGITS, "Flux-Seq must be a positive decimal integer")
    .meta({ description: "the batch's number for this producer: a positive integer, at most 2^53 - 1 (9007199254740991)" })
    .transform(Number)
    .refine(Number.isSafeInteger, "Flux-Seq must be at most 2^53 - 1"),
});

/**
 * The idempotency key when both headers are valid, told without the schema (which accepts
 * exactly the same headers: a test checks it), or null; the schema then says what is wrong.
 */
export function validProducerKey(producer: string | undefined, digits: string | undefined): { producer: string; seq: number } | null {
  if (producer === undefined || digits === undefined || !PRODUCER_ID.test(producer) || !SEQ_DIGITS.test(digits)) return null;
  const seq = Number(digits);
  return Number.isSafeInteger(seq) ? { producer, seq } : null;
}

/** What one partition of one dataflow did with the batch. */
const PartitionAckSchema = z.object({
  partition: z.number().int(),
  lsn: z.number().int(),
  replicated: z.boolean(),
  duplicate: z.boolean(),
  /** Records of this sub-batch dropped because their window had closed; 0 for a duplicate (counted when first applied). */
  late: z.number().int().min(0),
});
export type PartitionAck = z.infer<typeof PartitionAckSchema>;

/** `200` body of `POST /v1/streams/{stream}/events`. */
export const IngestResponseSchema = z.object({
  stream: z.string(),
  producer: z.string(),
  seq: z.number().int(),
  events: z.number().int(),
  /**
   * True when every partition the batch touches had already applied it; false when it
   * touches none (every event filtered out), since nothing was applied then or before.
   */
  duplicate: z.boolean(),
  dataflows: z.array(
    z.object({
      dataflow: z.string(),
      partitions: z.array(PartitionAckSchema),
      /**
       * This batch's events for this dataflow: `accepted` passed the filter and went to a
       * partition, `filtered` were dropped by the filter, `late` (of the accepted) were
       * dropped because their window had closed (not counted again for a duplicate).
       */
      records: z.object({ accepted: z.number().int().min(0), filtered: z.number().int().min(0), late: z.number().int().min(0) }),
    }),
  ),
});
export type IngestResponse = z.infer<typeof IngestResponseSchema>;
