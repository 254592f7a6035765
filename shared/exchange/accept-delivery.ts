/**
 * D_j's side of the exchange (issue 27): accepting a delivery against the per-source
 * progress it holds. Deterministic in (progress, delivery), so both D replicas applying
 * the same logged delivery reach the same progress; idempotent, so a redelivery is a
 * duplicate. Invariants: per source, D holds outputs (0, hw] exactly once, in order; the
 * effective watermark is the minimum over every expected source, null until each reported.
 */
import type { FluxRecord } from "../wire/window-result.ts";
import type { Delivery, DownstreamProgress } from "../wire/exchange.ts";
import { sourceKey } from "./exchange-types.ts";

/**
 * What became of a delivery. `gap`: it starts above `hw` (resend from `hw`). `duplicate`:
 * nothing in it was new. `accepted`: `records` (with their `outputSeqs`) are the new ones,
 * in order; `tickMs` is the new effective watermark when it rose (a clock tick for D's
 * windows), else null. `unknown-source`: the source is not one D reads (a stale route).
 */
export type Acceptance =
  | { status: "gap" | "duplicate"; hw: number }
  | { status: "accepted"; hw: number; records: FluxRecord[]; outputSeqs: number[]; tickMs: number | null }
  | { status: "unknown-source"; source: string };

/**
 * Accepts `delivery` into `progress` (mutated), given the `sources` D reads (their
 * {@link sourceKey}s, see {@link expectedSources}; a missing entry in `progress` is a
 * source never heard from: hw 0). Keeps only records above `hw`, raises `hw` to `toSeq`
 * and the source's watermark to the delivery's (never lowers either). A delivery without
 * records that raises neither is a duplicate, so a probe (`fromSeq = toSeq = 0`) always is.
 * @throws Error when the delivery is malformed (seqs out of range or order): a bug upstream.
 */
export function acceptDelivery(progress: DownstreamProgress, delivery: Delivery, sources: readonly string[]): Acceptance {
  const key = sourceKey(delivery.source);
  if (!sources.includes(key)) return { status: "unknown-source", source: key };
  assertWellFormed(delivery, key);
  const held = progress[key] ?? { hw: 0, watermarkMs: null, partitions: delivery.source.partitions };
  if (delivery.fromSeq > held.hw) return { status: "gap", hw: held.hw };
  const raisesWatermark = delivery.watermarkMs !== null && (held.watermarkMs === null || delivery.watermarkMs > held.watermarkMs);
  if (delivery.toSeq <= held.hw && !raisesWatermark) return { status: "duplicate", hw: held.hw };
  const before = effectiveWatermark(progress, sources);
  const first = delivery.outputSeqs.findIndex((seq) => seq > held.hw);
  const from = first === -1 ? delivery.outputSeqs.length : first;
  const watermarkMs = raisesWatermark ? delivery.watermarkMs : held.watermarkMs;
  progress[key] = { hw: Math.max(held.hw, delivery.toSeq), watermarkMs, partitions: delivery.source.partitions };
  const after = effectiveWatermark(progress, sources);
  const tickMs = after !== null && (before === null || after > before) ? after : null;
  return { status: "accepted", hw: progress[key].hw, records: delivery.records.slice(from), outputSeqs: delivery.outputSeqs.slice(from), tickMs };
}

/**
 * D_j's effective watermark, ms: the lowest watermark over `sources`, or null while any
 * source has reported none (or with no sources). D's windows close on this alone: no
 * source will deliver an output with event time below it.
 */
export function effectiveWatermark(progress: DownstreamProgress, sources: readonly string[]): number | null {
  let lowest: number | null = null;
  for (const key of sources) {
    const watermarkMs = progress[key]?.watermarkMs ?? null;
    if (watermarkMs === null) return null;
    if (lowest === null || watermarkMs < lowest) lowest = watermarkMs;
  }
  return lowest;
}

/**
 * The sources of a stage reading the dataflows `from`: every partition of each, as many
 * as its partitions said (the most any of them said, and `delivery`'s, if given). A
 * dataflow not heard from yet stands as one source that never reported (`name/?`), so the
 * effective watermark stays null until every upstream has spoken. Both replicas of D
 * derive the same list from the same logged deliveries.
 */
export function expectedSources(from: readonly string[], progress: DownstreamProgress, delivery?: Delivery): string[] {
  const counts = new Map<string, number>();
  const note = (dataflow: string, partitions: number) => counts.set(dataflow, Math.max(counts.get(dataflow) ?? 0, partitions));
  for (const [key, held] of Object.entries(progress)) note(key.slice(0, key.lastIndexOf("/")), held.partitions);
  if (delivery) note(delivery.source.dataflow, delivery.source.partitions);
  return from.flatMap((dataflow) => {
    const partitions = counts.get(dataflow);
    if (partitions === undefined) return [`${dataflow}/?`];
    return Array.from({ length: partitions }, (_, partition) => sourceKey({ dataflow, partition }));
  });
}

/** The keys of a downstream's sources: every partition of each upstream dataflow it reads. */
export function sourceKeysOf(upstreams: readonly { dataflow: string; partitions: number }[]): string[] {
  return upstreams.flatMap(({ dataflow, partitions }) => Array.from({ length: partitions }, (_, partition) => sourceKey({ dataflow, partition })));
}

function assertWellFormed(delivery: Delivery, key: string): void {
  const { fromSeq, toSeq, records, outputSeqs } = delivery;
  const ordered = outputSeqs.every((seq, k) => seq > (k === 0 ? fromSeq : (outputSeqs[k - 1] ?? fromSeq)) && seq <= toSeq);
  if (toSeq < fromSeq || records.length !== outputSeqs.length || !ordered) {
    throw new Error(`malformed delivery from ${key}: (${fromSeq}, ${toSeq}] with ${records.length} records and outputSeqs [${outputSeqs.slice(0, 5).join(", ")}…]`);
  }
}

/** A copy of per-source progress that shares nothing with it. */
export function copyProgress(progress: DownstreamProgress): DownstreamProgress {
  const copy: DownstreamProgress = {};
  for (const [key, held] of Object.entries(progress)) copy[key] = { ...held };
  return copy;
}
