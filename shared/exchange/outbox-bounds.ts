/**
 * Flow control of U_i's outbox (issue 27): lag per edge, how far the outbox may be trimmed,
 * and when ingest must be refused. Invariant: nothing above the lowest acknowledgement of
 * every edge is trimmed (an unknown acknowledgement, after a fail-over, trims nothing);
 * acknowledgements are of stable downstream progress, so a downstream fail-over never
 * needs a trimmed output again.
 */
import type { EdgeCursor } from "./exchange-types.ts";

/** One edge out of U_i: the downstream dataflow and partition, and U_i's cursor for it. */
export interface OutboxEdge {
  dataflow: string;
  partition: number;
  cursor: EdgeCursor;
}

/**
 * Outputs of U_i the edge's downstream has not acknowledged: `lastSeq − acked`, where an
 * unknown `acked` counts as `trimmedThrough` (it acknowledged at least that much, or U_i
 * could not have trimmed it). Never negative.
 */
export function edgeLag(lastSeq: number, trimmedThrough: number, cursor: EdgeCursor): number {
  return Math.max(0, lastSeq - (cursor.acked ?? trimmedThrough));
}

/**
 * The outputSeq through which U_i may delete stored outputs: the lowest `acked` over
 * `edges` (all edges of every downstream dataflow), never below `trimmedThrough`; with no
 * edges (nobody reads U) or any unknown cursor, `trimmedThrough` (nothing new is trimmed).
 * Outputs stay readable by the results API until then, so a result retention rule (if
 * any) must keep them too.
 */
export function trimPoint(trimmedThrough: number, edges: readonly OutboxEdge[]): number {
  if (edges.length === 0) return trimmedThrough;
  let lowest = Number.POSITIVE_INFINITY;
  for (const { cursor } of edges) {
    if (cursor.acked === null) return trimmedThrough;
    lowest = Math.min(lowest, cursor.acked);
  }
  return Math.max(trimmedThrough, lowest);
}

/**
 * Why U_i must refuse ingest (a 503 naming the edge), or null: the first edge, in the
 * order given, lagging by `boundOutputs` or more. One accepted batch can still emit many
 * outputs, so the outbox may exceed the bound by what the batches already logged emit.
 * @example "edge top-pages/p2 → global-top/p1 is 10,000 outputs behind (bound 10,000): downstream partition unavailable"
 */
export function ingestRefusal(
  source: { dataflow: string; partition: number },
  lastSeq: number,
  trimmedThrough: number,
  edges: readonly OutboxEdge[],
  boundOutputs: number,
): string | null {
  for (const edge of edges) {
    const lag = edgeLag(lastSeq, trimmedThrough, edge.cursor);
    if (lag < boundOutputs) continue;
    const name = `edge ${source.dataflow}/p${source.partition} → ${edge.dataflow}/p${edge.partition}`;
    return `${name} is ${grouped(lag)} outputs behind (bound ${grouped(boundOutputs)}): downstream partition unavailable`;
  }
  return null;
}

/** An integer with `,` between groups of three digits (no locale: shared/ must not depend on one). */
function grouped(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}
