/**
 * The `200` answer of `POST /v1/streams/{stream}/events`, read tolerantly: the per-dataflow
 * record counts (`records: {accepted, filtered, late}`) and per-partition `late` counts are
 * newer fields, so they may be absent (issue 13 interface); totals then count only events.
 */
import * as z from "zod";
import { IngestResponseSchema } from "../wire/ingest.ts";

const PartitionAckSchema = IngestResponseSchema.shape.dataflows.element.shape.partitions.element.extend({
  late: z.number().int().optional(),
});

const RecordCountsSchema = z.object({ accepted: z.number().int(), filtered: z.number().int(), late: z.number().int() });

/** The answer with the optional newer fields. */
export const IngestAnswerSchema = IngestResponseSchema.extend({
  dataflows: z.array(z.object({ dataflow: z.string(), partitions: z.array(PartitionAckSchema), records: RecordCountsSchema.optional() })),
});
export type IngestAnswer = z.infer<typeof IngestAnswerSchema>;

/** Record counts over every dataflow of an answer; zeros where the server did not report them. */
export function recordCounts(answer: IngestAnswer): z.infer<typeof RecordCountsSchema> {
  const sum = { accepted: 0, filtered: 0, late: 0 };
  for (const d of answer.dataflows) {
    if (!d.records) continue;
    sum.accepted += d.records.accepted;
    sum.filtered += d.records.filtered;
    sum.late += d.records.late;
  }
  return sum;
}
