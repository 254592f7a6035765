/**
 * D_j's primary receiving a delivery from an upstream partition (issue 27, DESIGN.md §4
 * "Between stages"): judged against the progress of everything it has logged (applied
 * plus pending entries), then logged like a batch with only the records it did not hold,
 * forwarded to its standby and answered once stable. Its answers name only stable
 * progress: the upstream trims behind them, and a fail-over of D never needs them again.
 */
import { acceptDelivery, copyProgress, expectedSources } from "../exchange/accept-delivery.ts";
import { deliveryEntry, deliveryOf, deliveryProducer, isDeliveryEntry } from "../exchange/delivery-entry.ts";
import { sourceKey } from "../exchange/exchange-types.ts";
import { sourcesOf } from "../wire/dataflow-spec.ts";
import type { DownstreamProgress } from "../wire/exchange.ts";
import type { LogEntry } from "../wire/persisted.ts";
import type { Deliver, DeliverReply, Refusal } from "../wire/replica-rpc.ts";
import type { ReplicaEffects, ReplicaState, ReplicaTuning } from "../replica/replica-state.ts";
import { appendEntry, checkEpoch, type StepResult } from "../replica/replica-steps.ts";

/** What the primary does with a delivery: answer now, or once the entry at `waitLsn` is stable (then with its stable `hw`). */
export type DeliveryVerdict = { done: DeliverReply } | { waitLsn: number; status: "accepted" | "duplicate" };

/**
 * Primary: judges `msg.delivery` against the progress of everything logged here. A gap is
 * answered at once with the stable `hw` (the upstream resends from there); a duplicate
 * waits for the pending entry that covers it, if any; new records (or a higher watermark)
 * are logged as one entry (stable at once without a standby).
 */
export function logDelivery(state: ReplicaState, msg: Deliver, tuning: ReplicaTuning): StepResult<DeliveryVerdict | Refusal> {
  const effects: ReplicaEffects = { log: [], outputs: [] };
  const refusal = checkEpoch(state, msg.epoch, "primary");
  if (refusal) return { reply: refusal, effects };
  const { delivery } = msg;
  const from = sourcesOf(state.meta.spec);
  const logged = loggedProgress(state, from);
  const judged = acceptDelivery(logged, delivery, expectedSources(from, logged, delivery));
  if (judged.status === "unknown-source") {
    const message = `dataflow '${state.meta.dataflowId}' does not read '${delivery.source.dataflow}' partition ${delivery.source.partition}`;
    return { reply: { done: { status: "unknown-source", message } }, effects };
  }
  const key = sourceKey(delivery.source);
  const stableHw = state.sources[key]?.hw ?? 0;
  if (judged.status === "gap") return { reply: { done: { status: "gap", hw: stableHw } }, effects };
  if (judged.status !== "accepted") {
    const producer = deliveryProducer(delivery.source);
    let covering: LogEntry | undefined;
    for (const entry of state.pending) if (entry.producer === producer) covering = entry;
    return { reply: covering ? { waitLsn: covering.lsn, status: "duplicate" } : { done: { status: "duplicate", hw: stableHw } }, effects };
  }
  const held = { ...delivery, records: judged.records, outputSeqs: judged.outputSeqs };
  const lsn = appendEntry(state, deliveryEntry(held), tuning, effects);
  if (state.meta.hasStandby) return { reply: { waitLsn: lsn, status: "accepted" }, effects };
  return { reply: { done: { status: "accepted", hw: state.sources[key]?.hw ?? 0 } }, effects };
}

/** The stable `hw` D holds of `delivery`'s source (for the answer once the entry it waited for is stable). */
export function stableHw(state: ReplicaState, source: Deliver["delivery"]["source"]): number {
  return state.sources[sourceKey(source)]?.hw ?? 0;
}

/** D's progress as of everything logged: the applied progress plus the pending deliveries, in LSN order. */
function loggedProgress(state: ReplicaState, from: readonly string[]): DownstreamProgress {
  const progress = copyProgress(state.sources);
  for (const entry of state.pending) {
    if (!isDeliveryEntry(entry)) continue;
    const delivery = deliveryOf(entry);
    acceptDelivery(progress, delivery, expectedSources(from, progress, delivery));
  }
  return progress;
}
