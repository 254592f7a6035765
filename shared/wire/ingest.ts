/** HTTP-level shapes of ingest: the producer headers and the success response. */
import { z } from "zod";

/** `Flux-Producer-Id` and `Flux-Seq`: the batch's idempotency key. */
export const ProducerHeadersSchema = z.object({
  "flux-producer-id": z
    .string({ error: "Flux-Producer-Id header is required" })
    .min(1)
    .max(128)
    .regex(/^[A-Za-z0-9_.:-]+$/, "Flux-Producer-Id: use letters, digits, '_', '.', ':' or '-'"),
  "flux-seq": z
    .string({ error: "Flux-Seq header is required" })
    .regex(/^[1-9][0-9]{0,15}$/, "Flux-Seq must be a positive decimal integer")
    .transform(Number)
    .refine(Number.isSafeInteger, "Flux-Seq must be at most 2^53 - 1"),
});

/** What one partition of one dataflow did with the batch. */
const PartitionAckSchema = z.object({
  partition: z.number().int(),
  lsn: z.number().int(),
  replicated: z.boolean(),
  duplicate: z.boolean(),
});
export type PartitionAck = z.infer<typeof PartitionAckSchema>;

/** `200` body of `POST /v1/streams/{stream}/events`. */
export const IngestResponseSchema = z.object({
  stream: z.string(),
  producer: z.string(),
  seq: z.number().int(),
  events: z.number().int(),
  /** True when every partition had already applied this batch. */
  duplicate: z.boolean(),
  dataflows: z.array(z.object({ dataflow: z.string(), partitions: z.array(PartitionAckSchema) })),
});
export type IngestResponse = z.infer<typeof IngestResponseSchema>;
