/**
 * Builds the answer. Every event is either filtered out or routed (a batch with an invalid
 * event is refused before this), so `filtered` = events − accepted. `duplicate` is true
 * only when the batch touched a partition and every partition it touched had applied it.
 */
export function ingestAnswer(batch, routed, acks) {
    const dataflows = acks.map((ack) => {
        const subBatches = routed.find((r) => r.record.id === ack.dataflow)?.subBatches;
        const accepted = subBatches ? [...subBatches.values()].reduce((n, records) => n + records.length, 0) : 0;
        const late = ack.partitions.reduce((n, p) => n + p.late, 0);
        return { ...ack, records: { accepted, filtered: batch.events - accepted, late } };
    });
    const touched = acks.flatMap((ack) => ack.partitions);
    return { ...batch, duplicate: touched.length > 0 && touched.every((p) => p.duplicate), dataflows };
}
