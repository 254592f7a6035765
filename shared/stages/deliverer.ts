/**
 * U_i's primary delivering its results to the stages that read them (issue 27, DESIGN.md
 * §4 "Between stages"). The outbox is the partition's stored outputs (written in the
 * transaction that emitted them, identical on both replicas); this keeps in memory only
 * each reader's routed tail above the lowest acknowledgement, refilled from storage after
 * a fail-over or when a new stage starts from the first result. Per edge (U_i, D_j) one
 * delivery is in flight (`plan-delivery.ts`); cursors are soft state, relearned by a
 * probe whenever this replica becomes primary. Failed calls are retried on the object's
 * alarm, so a downstream that returns is caught up without any new input.
 */
import type { KeyGroupMap } from "../keygroups/key-groups.ts";
import { nextDueAtMs, planDeliveries, onDeliveryFailed, onDeliveryReply, type PlannedDelivery } from "../exchange/plan-delivery.ts";
import { watermarkStepOf } from "../exchange/watermark-step.ts";
import { edgeLag, ingestRefusal, type OutboxEdge } from "../exchange/outbox-bounds.ts";
import { routeOutputs } from "../exchange/route-outputs.ts";
import { unknownCursor, type DeliveryLimits, type EdgeCursor, type RoutedOutput } from "../exchange/exchange-types.ts";
import type { DataflowSpec } from "../wire/dataflow-spec.ts";
import type { Delivery, EdgeStatus, SourceRef } from "../wire/exchange.ts";
import type { Deliver, DeliverReply, NumberedOutput } from "../wire/replica-rpc.ts";

/** A stage reading U as the deliverer needs it: its spec and key groups (to route) and each partition's primary and epoch. */
export interface ReaderRoute {
  id: string;
  spec: DataflowSpec;
  keyGroups: KeyGroupMap;
  routes: readonly { primary: string; epoch: number }[];
}

/** How U_i's primary reaches the stages reading it; the Durable Object backs it with stubs and its alarm. */
export interface DeliveryPort {
  /** The readers among `ids` that exist, are ready and are not being deleted. Rejects when it cannot tell. */
  readers(ids: readonly string[]): Promise<ReaderRoute[]>;
  deliver(replica: string, msg: Deliver): Promise<DeliverReply>;
  /** A call to `replica` failed or timed out: the monitor should probe it now. */
  reportFailure(replica: string): void;
  /** Calls `Deliverer.kick` at or after `atMs`, also after the object restarted. */
  wakeAt(atMs: number): void;
  /** Something that is not a failed call went wrong (a bug, or outputs a stage cannot read): for the log. */
  warn(message: string): void;
}

/** U_i as the deliverer sees it: null unless it is a primary with state. */
export interface UpstreamView {
  source: SourceRef;
  /** The field(s) U's results are keyed by (a stage reads them as `group`). */
  key: DataflowSpec["key"];
  epoch: number;
  readers: readonly string[];
  /** Outputs emitted so far (all stable: outputs come from the stable prefix only). */
  outputSeq: number;
  /** U_i's watermark as of those outputs (`upstream-watermark.ts`), ms; null: no claim. */
  watermarkMs: number | null;
}

/** What the deliverer needs from its replica. */
export interface DelivererLink {
  view(): UpstreamView | null;
  /** Up to `limit` stored outputs with `outputSeq > afterSeq`, ascending. */
  readOutputs(afterSeq: number, limit: number): NumberedOutput[];
  now(): number;
}

/** Sizes and paces of the exchange (`FluxConfig`). */
export interface ExchangeLimits extends DeliveryLimits {
  /** An edge this many outputs behind refuses U_i's ingest (backpressure). */
  boundOutputs: number;
  /** A failed delivery is retried after this, ms. */
  retryMs: number;
  maxKeyLength: number;
}

/** Outputs read from storage per page into a reader's tail. */
const PAGE = 500;

/**
 * A delivery that only covers results routed to other partitions of a stage (so the edge
 * counts as caught up, for backpressure and status) waits this long, or until a quarter of
 * the outbox bound is owed: watermarks and results go at once, coverage need not.
 */
const COVER_AFTER_MS = 1_000;

interface Reader {
  route: ReaderRoute;
  /** The limits of its edges: the exchange's, with the stage's close steps and coverage pacing. */
  limits: ExchangeLimits;
  cursors: EdgeCursor[];
  /** The delivery in flight per edge, and the highest outputSeq ever sent on it. */
  sent: (Delivery | null)[];
  delivered: (number | null)[];
  /** Routed outputs with outputSeq in (from, from + outputs.length]. */
  tail: { from: number; outputs: RoutedOutput[] };
  /** Outputs above this were routed once already (problems are reported once). */
  reportedThrough: number;
}

export class Deliverer {
  readonly #port: DeliveryPort;
  readonly #link: DelivererLink;
  readonly #limits: ExchangeLimits;
  /** What the readers were learned for: the epoch and reader ids of this replica as primary. */
  #for: string | null = null;
  #readers: Reader[] | null = null;
  /** Set when a reader's routing may have changed (a refusal or a failed call): learn it again, keeping the cursors. */
  #refresh = false;
  #fetching = false;
  /** Bumped by `reset`: answers to deliveries sent before it are ignored. */
  #generation = 0;
  #wakeAtMs: number | null = null;

  constructor(port: DeliveryPort, link: DelivererLink, limits: ExchangeLimits) {
    this.#port = port;
    this.#link = link;
    this.#limits = limits;
  }

  /** Plans and sends what is due now (new outputs, a higher watermark, retries); cheap when nothing is. */
  kick(): void {
    const view = this.#link.view();
    const key = view && view.readers.length > 0 ? `${view.epoch}|${view.readers.join(",")}` : null;
    if (key !== this.#for) this.reset(key);
    if (!view || key === null) return;
    if (!this.#readers || this.#refresh) return void this.#fetch(view, key);
    let dueAtMs = Number.POSITIVE_INFINITY;
    for (const reader of this.#readers) {
      this.#fill(reader, view);
      const outbox = this.#outbox(reader, view);
      for (const planned of planDeliveries(outbox, reader.cursors, this.#link.now(), reader.limits)) this.#send(reader, planned);
      reader.cursors.forEach((c, j) => (dueAtMs = Math.min(dueAtMs, nextDueAtMs(outbox, c, j, reader.limits) ?? Number.POSITIVE_INFINITY)));
    }
    if (dueAtMs < Number.POSITIVE_INFINITY) this.#wake(dueAtMs);
  }

  /** Forgets every cursor and reader (a restart, a new epoch or a new set of readers): the next kick probes again. */
  reset(key: string | null = null): void {
    this.#for = key;
    this.#readers = null;
    this.#refresh = false;
    this.#generation += 1;
  }

  /** Why U_i must refuse new batches now (an edge {@link ExchangeLimits.boundOutputs} behind), or null. */
  ingestRefusal(): string | null {
    const view = this.#link.view();
    if (!view || !this.#readers) return null;
    const edges: OutboxEdge[] = this.#readers.flatMap((r) => r.cursors.map((cursor, partition) => ({ dataflow: r.route.id, partition, cursor })));
    const lowest = Math.min(...this.#readers.map((r) => r.tail.from));
    return ingestRefusal(view.source, view.outputSeq, lowest, edges, this.#limits.boundOutputs);
  }

  /** Per edge: what was sent and acknowledged since this replica became primary (empty unless it delivers). */
  edges(): EdgeStatus[] {
    return (this.#readers ?? []).flatMap((r) => r.cursors.map((c, partition) => ({ dataflow: r.route.id, partition, delivered: r.delivered[partition] ?? null, acknowledged: c.acked })));
  }

  /** The largest lag of any edge now, in outputs (0 without readers). */
  maxLag(): number {
    const view = this.#link.view();
    if (!view || !this.#readers) return 0;
    return Math.max(0, ...this.#readers.flatMap((r) => r.cursors.map((c) => edgeLag(view.outputSeq, r.tail.from, c))));
  }

  async #fetch(view: UpstreamView, key: string): Promise<void> {
    if (this.#fetching) return;
    this.#fetching = true;
    try {
      const routes = await this.#port.readers(view.readers);
      if (this.#for !== key) return;
      // A stage's acknowledgements are of its stable progress, which no fail-over of it lowers: cursors outlive its routing.
      const known = new Map((this.#readers ?? []).map((r) => [r.route.id, r]));
      this.#readers = routes.map((route) => {
        const kept = known.get(route.id);
        const limits = this.#readerLimits(route);
        if (kept && kept.cursors.length === route.routes.length) return { ...kept, route, limits };
        const fresh = { cursors: route.routes.map(unknownCursor), sent: route.routes.map(() => null), delivered: route.routes.map(() => null) };
        return { route, limits, ...fresh, tail: { from: view.outputSeq, outputs: [] }, reportedThrough: view.outputSeq };
      });
      this.#refresh = false;
    } catch {
      this.#wake(this.#link.now() + this.#limits.retryMs);
      return;
    } finally {
      this.#fetching = false;
    }
    this.kick();
  }

  /** Moves the reader's tail to start at its lowest known acknowledgement and fills it from storage, at most `boundOutputs` long. */
  #fill(reader: Reader, view: UpstreamView): void {
    const known = reader.cursors.flatMap((c) => (c.acked === null ? [] : [c.acked]));
    const lowest = known.length === 0 ? reader.tail.from : Math.min(...known);
    const tail = reader.tail;
    if (lowest < tail.from || lowest > tail.from + tail.outputs.length) reader.tail = { from: lowest, outputs: [] };
    else if (lowest > tail.from) reader.tail = { from: lowest, outputs: tail.outputs.slice(lowest - tail.from) };
    const t = reader.tail;
    while (t.outputs.length < this.#limits.boundOutputs && t.from + t.outputs.length < view.outputSeq) {
      const page = this.#link.readOutputs(t.from + t.outputs.length, Math.min(PAGE, this.#limits.boundOutputs - t.outputs.length));
      if (page.length === 0) break;
      const routed = routeOutputs(reader.route.spec, reader.route.keyGroups, page, this.#limits.maxKeyLength, { id: view.source.dataflow, key: view.key });
      this.#report(reader, routed);
      t.outputs.push(...routed);
    }
  }

  /** Outputs a stage cannot read route nowhere; each is reported once, never dropped silently. */
  #report(reader: Reader, routed: readonly RoutedOutput[]): void {
    for (const output of routed) {
      if (output.outputSeq <= reader.reportedThrough) continue;
      reader.reportedThrough = output.outputSeq;
      if (output.problem !== undefined) this.#port.warn(`result ${output.outputSeq} goes to no partition of stage '${reader.route.id}': ${output.problem}`);
    }
  }

  #outbox(reader: Reader, view: UpstreamView) {
    const { from, outputs } = reader.tail;
    // Only a tail that reaches U_i's last output may carry its watermark (outputs after the tail may be older).
    const complete = from + outputs.length === view.outputSeq;
    return { source: view.source, trimmedThrough: from, outputs, watermarkMs: complete ? view.watermarkMs : null };
  }

  /** The limits of edges to `route`'s stage: its close steps, coverage paced by {@link COVER_AFTER_MS} or a quarter of the bound. */
  #readerLimits(route: ReaderRoute): ExchangeLimits {
    const coverAfterOutputs = Math.max(1, Math.floor(this.#limits.boundOutputs / 4));
    return { ...this.#limits, watermarkStep: watermarkStepOf(route.spec), coverAfterOutputs, coverAfterMs: COVER_AFTER_MS };
  }

  #send(reader: Reader, { partition, delivery }: PlannedDelivery): void {
    const route = reader.route.routes[partition];
    const cursor = reader.cursors[partition];
    if (!route || !cursor) return;
    reader.sent[partition] = delivery;
    reader.delivered[partition] = Math.max(reader.delivered[partition] ?? 0, delivery.toSeq);
    const generation = this.#generation;
    const failed = (refetch: boolean) => {
      onDeliveryFailed(cursor, delivery);
      if (refetch) this.#refresh = true;
      this.#wake(this.#link.now() + this.#limits.retryMs);
    };
    this.#port.deliver(route.primary, { epoch: route.epoch, delivery }).then(
      (reply) => {
        if (generation !== this.#generation) return;
        if (reply.status === "stale" || reply.status === "behind" || reply.status === "wrong-role") return failed(true);
        if (reply.status === "unconfirmed") {
          this.#port.reportFailure(route.primary);
          return failed(true);
        }
        if (reply.status === "unknown-source") {
          this.#port.warn(`stage '${reader.route.id}' refused a delivery: ${reply.message}`);
          return failed(true);
        }
        // Stored outputs are never deleted, so no acknowledgement can name one U_i no longer holds.
        onDeliveryReply(cursor, delivery, reply, 0);
        this.kick();
      },
      () => {
        if (generation !== this.#generation) return;
        // The replica may have been replaced meanwhile: learn the routes again, as a router does.
        this.#port.reportFailure(route.primary);
        failed(true);
      },
    );
  }

  /** Arms the object's alarm for `atMs` unless one is due sooner. */
  #wake(atMs: number): void {
    if (this.#wakeAtMs !== null && this.#wakeAtMs <= atMs && this.#wakeAtMs > this.#link.now()) return;
    this.#wakeAtMs = atMs;
    this.#port.wakeAt(atMs);
  }
}
