/**
 * A replica with the exchange between stages layered on (issue 27): as a stage's primary it
 * takes deliveries (`delivery-step.ts`); as the primary of a dataflow that stages read it
 * delivers its results (`deliverer.ts`) after every step, and refuses new batches while an
 * edge lags too far behind. The Durable Object and the simulator hold one of these per
 * replica; a dataflow without stages pays one check per step.
 */
import { upstreamWatermark } from "../exchange/upstream-watermark.ts";
import { TICK_PRODUCER } from "../replica/clock-ticks.ts";
import type { ForwardPort } from "../replica/forwarder.ts";
import { NOT_INITIALISED, ReplicaHost } from "../replica/replica-host.ts";
import type { ReplicaTuning } from "../replica/replica-state.ts";
import type { ReplicaStorage } from "../replica/replica-storage.ts";
import type { Deliver, DeliverReply, ReplicaStatus } from "../wire/replica-rpc.ts";
import { Deliverer, type DeliveryPort, type ExchangeLimits, type UpstreamView } from "./deliverer.ts";
import { logDelivery, stableHw } from "./delivery-step.ts";

export class StageNode {
  readonly host: ReplicaHost;
  readonly deliverer: Deliverer;
  readonly #tuning: ReplicaTuning;

  /** @param now the wall clock, ms (shared/ never reads one itself). */
  constructor(storage: ReplicaStorage, tuning: ReplicaTuning & ExchangeLimits, forwardPort: ForwardPort, deliveryPort: DeliveryPort, now: () => number) {
    this.#tuning = tuning;
    this.host = new ReplicaHost(storage, tuning, forwardPort, {
      afterStep: () => this.deliverer.kick(),
      // Clock ticks pass: they only move the watermark, which helps a stage catch up.
      admit: (msg) => (msg.batches.every((b) => b.producer === TICK_PRODUCER) ? null : this.deliverer.ingestRefusal()),
      forgotten: () => this.deliverer.reset(),
    });
    const link = { view: () => this.#view(), readOutputs: (after: number, limit: number) => storage.readOutputPage(after, limit), now };
    this.deliverer = new Deliverer(deliveryPort, link, tuning);
  }

  /** Stage primary: logs the delivery and answers once what it says is stable. */
  async deliver(msg: Deliver): Promise<DeliverReply> {
    const verdict = this.host.step((state) => logDelivery(state, msg, this.#tuning));
    if (!("waitLsn" in verdict)) return "done" in verdict ? verdict.done : verdict;
    try {
      await this.host.waitStable(verdict.waitLsn);
    } catch (err) {
      // Logged but not known to be stable (a forward failed): the upstream resends, and the entry is judged again.
      return { status: "unconfirmed", reason: err instanceof Error ? err.message : String(err) };
    }
    const state = this.host.load();
    return state ? { status: verdict.status, hw: stableHw(state, msg.delivery.source) } : NOT_INITIALISED;
  }

  /** A probe's answer ({@link ReplicaHost.probe}) with the edges this replica delivers on; it also kicks the deliverer. */
  probe(): ReplicaStatus | null {
    const status = this.host.probe();
    this.deliverer.kick();
    const edges = this.deliverer.edges();
    return status && edges.length > 0 ? { ...status, edges } : status;
  }

  /** U_i as its deliverer sees it: a primary's stable outputs and watermark. */
  #view(): UpstreamView | null {
    const state = this.host.load();
    if (state?.meta.role !== "primary") return null;
    const { dataflowId, partition, spec, epoch, readers, outputSeq } = state.meta;
    const watermarkMs = upstreamWatermark({ watermarkMs: state.operator.watermarkMs(), closing: state.operator.closing(), firstDueEndMs: null });
    return { source: { dataflow: dataflowId, partition, partitions: spec.partitions }, key: spec.key, epoch, readers, outputSeq, watermarkMs };
  }
}
