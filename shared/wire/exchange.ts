/**
 * Shapes of the exchange between stages that cross a boundary (issue 27): a delivery from
 * an upstream partition to a downstream partition, the downstream's reply, and the
 * per-source progress a downstream replica persists (in its checkpoint header, beside the
 * operator state, and in every delivery log entry's effect). Invariants are asserted by
 * the steps that read them (`accept-delivery.ts`), not here.
 */
import * as z from "zod";

/**
 * One upstream partition: the dataflow whose closed-window results it delivers, its
 * partition, and how many partitions that dataflow has (so the downstream knows every
 * source it must hear from before its clock may move: none of its replicas is told).
 */
const SourceRefSchema = z.object({ dataflow: z.string(), partition: z.number().int().min(0), partitions: z.number().int().min(1) });
export type SourceRef = z.infer<typeof SourceRefSchema>;

/** A compact record `[key, timeMs, ...field values]`, as `shared/ingest/route-events.ts` builds them. */
const FluxRecordSchema = z.tuple([z.string(), z.number()], z.union([z.number(), z.string()]));

/**
 * "This covers the source's outputs with outputSeq in (fromSeq, toSeq]; `records` are the
 * ones that route to you (`outputSeqs[k]` numbers `records[k]`, ascending); the source will
 * emit no output with event time ≤ `watermarkMs` any more" (null: no claim, as in a
 * delivery bounded before the source's last output, or a probe). A probe (a fresh or
 * failed-over upstream primary asking where to resume) is `fromSeq = toSeq = 0` without
 * records: always a duplicate, answered with the downstream's high-water mark.
 */
export const DeliverySchema = z.object({
  source: SourceRefSchema,
  fromSeq: z.number().int().min(0),
  toSeq: z.number().int().min(0),
  records: z.array(FluxRecordSchema),
  outputSeqs: z.array(z.number().int().min(1)),
  watermarkMs: z.number().nullable(),
});
export type Delivery = z.infer<typeof DeliverySchema>;

/**
 * The downstream's answer, sent only once what it says is stable (held by both downstream
 * replicas): `hw` is the highest source outputSeq it holds. `gap`: the delivery started
 * above `hw`; resend from `hw`. `duplicate`: nothing in it was new.
 */
export const DeliveryReplySchema = z.object({ status: z.enum(["accepted", "duplicate", "gap"]), hw: z.number().int().min(0) });
export type DeliveryReply = z.infer<typeof DeliveryReplySchema>;

/**
 * What a downstream partition holds of one source: outputs through `hw`, the highest
 * watermark it reported (null: none yet), and its dataflow's partition count as it said.
 */
const SourceProgressSchema = z.object({ hw: z.number().int().min(0), watermarkMs: z.number().nullable(), partitions: z.number().int().min(1) });

/** A downstream partition's progress per source, keyed by `sourceKey` (`exchange-types.ts`); persisted with its state. */
export const DownstreamProgressSchema = z.record(z.string(), SourceProgressSchema);
export type DownstreamProgress = z.infer<typeof DownstreamProgressSchema>;

/**
 * An edge out of an upstream primary as it knows it (soft state, `/v1/status`): the
 * downstream partition, the highest outputSeq it sent there and the highest acknowledged
 * (null: not known since this primary started).
 */
export const EdgeStatusSchema = z.object({
  dataflow: z.string(),
  partition: z.number().int().min(0),
  delivered: z.number().int().min(0).nullable(),
  acknowledged: z.number().int().min(0).nullable(),
});
export type EdgeStatus = z.infer<typeof EdgeStatusSchema>;
