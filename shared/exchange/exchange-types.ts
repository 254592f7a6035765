/**
 * The exchange between two partitioned, replicated stages (DESIGN.md §4 "Between stages",
 * issue 27): a downstream dataflow D reads the closed-window results of an upstream U.
 *
 * Design. Both replicas of U_i number outputs identically (`outputSeq`), stored in the
 * transaction that emitted them, so the stored outputs are the outbox. Only U_i's primary
 * delivers, from the stable prefix, one delivery in flight per edge (U_i, D_j) carrying
 * everything accumulated meanwhile (`plan-delivery.ts`). D_j keeps per source a high-water
 * mark `hw` and a watermark (`accept-delivery.ts`); acceptance is a pure function of that
 * progress and the delivery, so both D replicas applying the same logged delivery reach
 * the same state, and D acknowledges only stable progress. D's effective watermark is the
 * minimum over all sources (none until each has reported); D closes windows on it alone,
 * as a clock tick: delivered records must not advance D's event time, or a lagging
 * source's outputs would arrive late.
 * U_i's cursor per edge is soft state learned from D's replies; a new or restarted U_i
 * primary probes and resumes from D's `hw`. U_i trims its outbox only behind the lowest
 * acknowledgement of every edge, and refuses ingest once an edge lags by a bound
 * (`outbox-bounds.ts`). U_i's watermark comes from its operator (`upstream-watermark.ts`).
 * Invariants: D holds every U output routed to it exactly once, in outputSeq order per
 * source; D's effective watermark never passes a watermark a source did not report.
 */
import type { FluxRecord } from "../wire/window-result.ts";
import type { SourceRef } from "../wire/exchange.ts";

/** The key of a source in {@link DownstreamProgress} records: `dataflow/partition` (dataflow names hold no `/`). */
export function sourceKey(source: Pick<SourceRef, "dataflow" | "partition">): string {
  return `${source.dataflow}/${source.partition}`;
}

/**
 * U_i's memory of one edge to D_j (soft state: lost on fail-over or restart, then
 * relearned by a probe). `acked`: D_j's stable `hw` as last heard (null: unknown).
 * `ackedWatermarkMs`: the highest watermark D_j is known to hold from U_i.
 * `inFlight`: the one delivery sent and not yet answered or failed.
 */
export interface EdgeCursor {
  acked: number | null;
  ackedWatermarkMs: number | null;
  inFlight: { fromSeq: number; toSeq: number; watermarkMs: number | null; sentAtMs: number } | null;
  /** When the last delivery on this edge was sent, ms (null: never); idle deliveries wait `idleIntervalMs` after it. */
  lastSentAtMs: number | null;
}

/** A cursor that knows nothing yet: the next plan sends a probe. */
export function unknownCursor(): EdgeCursor {
  return { acked: null, ackedWatermarkMs: null, inFlight: null, lastSentAtMs: null };
}

/** One stored output of U_i as D's spec routes it: to `partition` as `record`, or to none (filtered out, or not routable: `problem`). */
export interface RoutedOutput {
  outputSeq: number;
  partition: number | null;
  record: FluxRecord | null;
  problem?: string;
}

/**
 * U_i's outbox as of one state: every output above `trimmedThrough` routed for one
 * downstream dataflow (`outputs[k].outputSeq === trimmedThrough + 1 + k`), and U_i's
 * watermark in that same state (null: no claim yet).
 */
export interface OutboxView {
  source: SourceRef;
  trimmedThrough: number;
  outputs: readonly RoutedOutput[];
  watermarkMs: number | null;
}

/** How deliveries are sized and paced. */
export interface DeliveryLimits {
  /** Records per delivery at most (≥ 1); a longer backlog goes in the next ones. */
  maxRecords: number;
  /** A delivery without records (watermark or coverage only) waits this long after the edge's last one, ms. */
  idleIntervalMs: number;
  /**
   * A delivery without records that only covers outputs routed elsewhere (so U_i may count
   * the edge as caught up) waits until they number this many, or `coverAfterMs` passed since
   * the edge's last delivery (defaults 1 and 0: at once).
   */
  coverAfterOutputs?: number;
  coverAfterMs?: number;
  /**
   * The downstream's close step of a watermark: a watermark in the same step as the one D_j
   * holds closes nothing more there, so it is worth no delivery of its own (default: each
   * watermark its own step). See `watermark-step.ts`.
   */
  watermarkStep?: (watermarkMs: number) => number;
}
