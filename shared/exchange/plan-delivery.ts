/**
 * U_i's side of the exchange (issue 27): which delivery each downstream partition gets
 * next, and what a reply teaches. At most one delivery per edge is in flight; the next one
 * carries everything accumulated meanwhile (group commit), bounded by `maxRecords`. Only a
 * delivery that reaches U_i's last output carries its watermark: a bounded one leaves
 * later outputs behind, which may be older than it. Cursors are soft state: an unknown one
 * sends a probe first.
 */
import type { Delivery, DeliveryReply } from "../wire/exchange.ts";
import type { DeliveryLimits, EdgeCursor, OutboxView } from "./exchange-types.ts";

/** A delivery to send to downstream partition `partition`. */
export interface PlannedDelivery {
  partition: number;
  delivery: Delivery;
}

/**
 * The next delivery per downstream partition (`cursors[j]` is edge (i, j)), marking each
 * sent one in flight on its cursor. Per edge without a delivery in flight: a probe when
 * the cursor is unknown; the records routed to j above `acked` (at most `maxRecords`, the
 * delivery then ending at the last one it carries) at once; else, once `idleIntervalMs`
 * after the edge's last delivery, a delivery without records when it would cover outputs
 * D_j has not acknowledged (so U_i can trim) or raise the watermark D_j holds. Edges whose
 * `acked` is above U_i's last output (D_j is ahead of a replica catching up) or below its
 * trim point (see {@link onDeliveryReply}) get nothing.
 */
export function planDeliveries(outbox: OutboxView, cursors: EdgeCursor[], nowMs: number, limits: DeliveryLimits): PlannedDelivery[] {
  const planned: PlannedDelivery[] = [];
  cursors.forEach((cursor, partition) => {
    if (cursor.inFlight !== null) return;
    const delivery = cursor.acked === null ? probe(outbox) : nextDelivery(outbox, partition, cursor, cursor.acked, nowMs, limits);
    if (delivery === null) return;
    cursor.inFlight = { fromSeq: delivery.fromSeq, toSeq: delivery.toSeq, watermarkMs: delivery.watermarkMs, sentAtMs: nowMs };
    cursor.lastSentAtMs = nowMs;
    planned.push({ partition, delivery });
  });
  return planned;
}

/** U_i's last output seq in `outbox` (its trim point when it holds none above it). */
export function lastOutputSeq(outbox: OutboxView): number {
  return outbox.trimmedThrough + outbox.outputs.length;
}

function probe(outbox: OutboxView): Delivery {
  return { source: outbox.source, fromSeq: 0, toSeq: 0, records: [], outputSeqs: [], watermarkMs: null };
}

function nextDelivery(outbox: OutboxView, partition: number, cursor: EdgeCursor, acked: number, nowMs: number, limits: DeliveryLimits): Delivery | null {
  const last = lastOutputSeq(outbox);
  if (acked > last || acked < outbox.trimmedThrough) return null;
  const records: Delivery["records"] = [];
  const outputSeqs: number[] = [];
  let toSeq = last;
  for (let k = acked - outbox.trimmedThrough; k < outbox.outputs.length; k++) {
    const output = outbox.outputs[k];
    if (output?.partition !== partition || output.record === null) continue;
    records.push(output.record);
    outputSeqs.push(output.outputSeq);
    if (records.length >= limits.maxRecords) {
      toSeq = output.outputSeq;
      break;
    }
  }
  const watermarkMs = toSeq === last ? outbox.watermarkMs : null;
  if (records.length === 0) {
    const due = recordlessDueAt(cursor, acked, toSeq, watermarkMs, limits);
    if (due === null || nowMs < due) return null;
  }
  return { source: outbox.source, fromSeq: acked, toSeq, records, outputSeqs, watermarkMs };
}

/**
 * When a delivery without records on an edge is worth sending, ms (null: never, as things
 * stand): `idleIntervalMs` after the edge's last one when it raises D_j's close step, or,
 * when it only covers outputs routed elsewhere, once they number `coverAfterOutputs` or
 * `coverAfterMs` after the last one.
 */
function recordlessDueAt(cursor: EdgeCursor, acked: number, toSeq: number, watermarkMs: number | null, limits: DeliveryLimits): number | null {
  const step = limits.watermarkStep ?? ((w: number) => w);
  const raises = watermarkMs !== null && (cursor.ackedWatermarkMs === null || step(watermarkMs) > step(cursor.ackedWatermarkMs));
  const since = cursor.lastSentAtMs ?? Number.NEGATIVE_INFINITY;
  if (raises) return since + limits.idleIntervalMs;
  if (toSeq === acked) return null;
  if (toSeq - acked >= (limits.coverAfterOutputs ?? 1)) return since + limits.idleIntervalMs;
  return since + Math.max(limits.idleIntervalMs, limits.coverAfterMs ?? 0);
}

/**
 * When edge `partition` next needs a delivery that no new output will bring, ms: a paced
 * watermark or coverage (see `planDeliveries`); null when it needs none or one is in flight.
 */
export function nextDueAtMs(outbox: OutboxView, cursor: EdgeCursor, partition: number, limits: DeliveryLimits): number | null {
  if (cursor.inFlight !== null || cursor.acked === null) return null;
  const last = lastOutputSeq(outbox);
  if (cursor.acked > last || cursor.acked < outbox.trimmedThrough) return null;
  const routedHere = outbox.outputs.slice(cursor.acked - outbox.trimmedThrough).some((o) => o.partition === partition && o.record !== null);
  if (routedHere) return null;
  return recordlessDueAt(cursor, cursor.acked, last, outbox.watermarkMs, limits);
}

/** What a reply meant to U_i: learned (`ok`), about a delivery no longer in flight (`stale`, ignored), or a loss. */
export type ReplyOutcome = { status: "ok" | "stale" } | { status: "lost"; message: string };

/**
 * Learns D_j's reply to `sent`: its `hw` becomes the cursor's `acked` (lower after a gap,
 * so the next delivery resends from there), and a non-gap reply means D_j holds `sent`'s
 * watermark. A reply to anything but the delivery in flight (same range and watermark) is stale and
 * changes nothing: the caller drops replies to calls it gave up on; this catches the rest.
 * `lost`: D_j needs outputs at or below `trimmedThrough`, which U_i no longer holds — the
 * downstream lost what it had acknowledged; an operator must intervene.
 */
export function onDeliveryReply(cursor: EdgeCursor, sent: Delivery, reply: DeliveryReply, trimmedThrough: number): ReplyOutcome {
  if (!isInFlight(cursor, sent)) return { status: "stale" };
  cursor.inFlight = null;
  cursor.acked = reply.hw;
  if (reply.status !== "gap" && sent.watermarkMs !== null) cursor.ackedWatermarkMs = Math.max(cursor.ackedWatermarkMs ?? sent.watermarkMs, sent.watermarkMs);
  if (reply.hw >= trimmedThrough) return { status: "ok" };
  const { dataflow, partition } = sent.source;
  return { status: "lost", message: `downstream holds ${dataflow}/p${partition} through output ${reply.hw}, but outputs through ${trimmedThrough} were trimmed` };
}

/** A delivery failed or timed out: the edge is free again, and the next plan resends from the same `acked`. */
export function onDeliveryFailed(cursor: EdgeCursor, sent: Delivery): void {
  if (isInFlight(cursor, sent)) cursor.inFlight = null;
}

function isInFlight(cursor: EdgeCursor, sent: Delivery): boolean {
  const f = cursor.inFlight;
  return f !== null && f.fromSeq === sent.fromSeq && f.toSeq === sent.toSeq && f.watermarkMs === sent.watermarkMs;
}
