/**
 * The `200` answer to a posted batch (issue 11): per dataflow, what each partition did
 * and how many of the batch's events were accepted, filtered out and dropped as late, so
 * a producer learns at once that data did not count. Kept apart from the write protocol.
 */
import type { IngestResponse } from "../wire/ingest.ts";
import type { DataflowAck, RoutedDataflow } from "./write-batch.ts";

/**
 * Builds the answer. Every event is either filtered out or routed (a batch with an invalid
 * event is refused before this), so `filtered` = events − accepted. `duplicate` is true
 * only when the batch touched a partition and every partition it touched had applied it.
 */
export function ingestAnswer(
  batch: { stream: string; producer: string; seq: number; events: number },
  routed: readonly RoutedDataflow[],
  acks: readonly DataflowAck[],
): IngestResponse {
  const dataflows = acks.map((ack) => {
    const subBatches = routed.find((r) => r.record.id === ack.dataflow)?.subBatches;
    const accepted = subBatches ? [...subBatches.values()].reduce((n, records) => n + records.length, 0) : 0;
    const late = ack.partitions.reduce((n, p) => n + p.late, 0);
    return { ...ack, records: { accepted, filtered: batch.events - accepted, late } };
  });
  const touched = acks.flatMap((ack) => ack.partitions);
  return { ...batch, duplicate: touched.length > 0 && touched.every((p) => p.duplicate), dataflows };
}
