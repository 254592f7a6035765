/**
 * Deliveries as log entries of the downstream partition (issue 27): D_j's primary logs an
 * accepted delivery like a batch, so its standby applies the same deliveries at the same
 * LSNs and both reach the same per-source progress and operator state. The entry's origin
 * is the source (`$from:` + its key; client producer ids cannot hold `$`), its records
 * text the delivery as JSON with only the records D_j did not hold yet.
 */
import type { LogEntry } from "../wire/persisted.ts";
import { isFluxRecord, type FluxRecord } from "../wire/window-result.ts";
import type { Delivery } from "../wire/exchange.ts";
import { sourceKey } from "./exchange-types.ts";

const DELIVERY_PRODUCER_PREFIX = "$from:";

/** Whether a log entry holds a delivery from an upstream partition. */
export function isDeliveryEntry(entry: Pick<LogEntry, "producer">): boolean {
  return entry.producer.startsWith(DELIVERY_PRODUCER_PREFIX);
}

/** The producer id of deliveries from `source` in a downstream log. */
export function deliveryProducer(source: Pick<Delivery["source"], "dataflow" | "partition">): string {
  return `${DELIVERY_PRODUCER_PREFIX}${sourceKey(source)}`;
}

/**
 * The log entry (without its LSN) for `delivery`. Its seq is `toSeq + 1` (seqs start at 1);
 * deliveries are judged by per-source progress, never by the dedup of `(producer, seq)`.
 */
export function deliveryEntry(delivery: Delivery): Omit<LogEntry, "lsn"> {
  const { source, fromSeq, toSeq, watermarkMs, outputSeqs, records } = delivery;
  const body = { p: source.partitions, f: fromSeq, t: toSeq, w: watermarkMs, s: outputSeqs, r: records };
  return { producer: deliveryProducer(source), seq: toSeq + 1, records: JSON.stringify(body) };
}

/**
 * The delivery a log entry holds, checked with cheap loops (this is D's hot path).
 * @throws Error when the entry is not a well-formed delivery entry.
 */
export function deliveryOf(entry: LogEntry): Delivery {
  const key = entry.producer.slice(DELIVERY_PRODUCER_PREFIX.length);
  const slash = key.lastIndexOf("/");
  const digits = key.slice(slash + 1);
  const body: unknown = JSON.parse(entry.records);
  if (slash < 1 || !/^[0-9]+$/.test(digits) || !isBody(body)) throw new Error(`log entry ${entry.lsn}: not a delivery`);
  const partition = Number(digits);
  const source = { dataflow: key.slice(0, slash), partition, partitions: body.p };
  return { source, fromSeq: body.f, toSeq: body.t, watermarkMs: body.w, outputSeqs: body.s, records: body.r };
}

interface Body {
  p: number;
  f: number;
  t: number;
  w: number | null;
  s: number[];
  r: FluxRecord[];
}

function isBody(value: unknown): value is Body {
  if (typeof value !== "object" || value === null) return false;
  const b = value as Record<string, unknown>;
  const counts = Number.isInteger(b.p) && (b.p as number) >= 1 && [b.f, b.t].every((n) => Number.isInteger(n) && (n as number) >= 0);
  const watermark = b.w === null || typeof b.w === "number";
  if (!counts || !watermark || !Array.isArray(b.s) || !Array.isArray(b.r) || b.s.length !== b.r.length) return false;
  return b.s.every((seq) => Number.isInteger(seq)) && b.r.every(isFluxRecord);
}
