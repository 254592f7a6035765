/**
 * An idempotent, batching producer for one stream (issue 13). Events queue in memory
 * (bounded: `send` waits while full), leave in batches cut by count, bytes or linger, one
 * batch in flight at a time. Each batch gets the next seq and is saved to the store
 * *before* it is sent, and is resent with that seq until acknowledged, so a producer
 * restarted on the same store neither loses nor duplicates an acknowledged-or-pending batch.
 */
import { DEFAULT_BACKOFF } from "./backoff.ts";
import { invalidRequest } from "./client-error.ts";
import { DEFAULT_LIMITS, type ProducerOptions } from "./producer-options.ts";
import { BatchQueue, type BatchLimits } from "./batch-queue.ts";
import { deliverBatch, KEEPALIVE_LIMIT_BYTES, type DeliverContext, type Outcome } from "./deliver-batch.ts";
import type { HttpClient } from "./http.ts";
import { recordCounts } from "./ingest-answer.ts";
import { addAck, freshProducerState, MemoryStore, parseProducerState, randomProducerId, type PendingBatch, type ProducerState, type ProducerStore, type ProducerTotals } from "./producer-store.ts";
import { sleep, Wake } from "./runtime.ts";

/** A running producer; create it with {@link Producer.open}. */
export class Producer {
  private readonly queue = new BatchQueue();
  private readonly wake = new Wake();
  private readonly limits: BatchLimits;
  private enqueued = 0;
  private done = 0;
  private forced = 0;
  private closing = false;
  private aborting = false;
  private hidden = false;
  private failure: Error | null = null;
  private readonly loop: Promise<void>;

  private readonly http: HttpClient;
  private readonly options: ProducerOptions;
  private readonly store: ProducerStore;
  private current: ProducerState;

  private constructor(http: HttpClient, options: ProducerOptions, store: ProducerStore, state: ProducerState) {
    this.http = http;
    this.options = options;
    this.store = store;
    this.current = state;
    this.limits = {
      maxBatchEvents: options.maxBatchEvents ?? DEFAULT_LIMITS.maxBatchEvents,
      maxBatchBytes: options.maxBatchBytes ?? DEFAULT_LIMITS.maxBatchBytes,
      lingerMs: options.lingerMs ?? DEFAULT_LIMITS.lingerMs,
    };
    if (state.pending) this.enqueued = state.pending.events.length;
    // A failing store (or a bug) stops the producer like a fatal answer, never as an unhandled rejection.
    this.loop = this.run().catch((err: unknown) => this.fail(err instanceof Error ? err : new Error(String(err))));
  }

  /** Loads the store (resending a saved pending batch first) and starts sending. */
  static async open(http: HttpClient, options: ProducerOptions): Promise<Producer> {
    checkLimits(options);
    const store = options.store ?? new MemoryStore();
    const saved = await store.load();
    if (saved && saved.stream !== options.stream) throw new Error(`the store holds producer ${saved.producerId} of stream '${saved.stream}', not '${options.stream}'`);
    const state = saved ?? freshProducerState(options.producerId ?? randomProducerId(() => http.runtime.random()), options.stream);
    if (!saved) await store.save(state);
    return new Producer(http, options, store, state);
  }

  get producerId(): string {
    return this.current.producerId;
  }

  /** A copy of the persisted state: next seq, pending batch, totals. */
  get state(): ProducerState {
    return parseProducerState(JSON.stringify(this.current));
  }

  get totals(): ProducerTotals {
    return { ...this.current.totals };
  }
  /** The error that stopped the producer (a FluxClientError, or the store's error), or null. */
  get error(): Error | null {
    return this.failure;
  }

  /**
   * Queues one event (any JSON value; the server wants objects). Resolves once queued,
   * waiting while the queue is full (backpressure). `tag` is kept with its batch and
   * saved as `ackedTag` when that is acknowledged (e.g. a line number to resume from).
   * @throws FluxClientError when the producer has failed; Error when it is closed
   */
  async send(event: unknown, tag?: unknown): Promise<void> {
    const json = JSON.stringify(event);
    if (json === undefined) throw new TypeError("an event must be a JSON value");
    const maxQueued = this.options.maxQueuedEvents ?? 10_000;
    while (!this.failure && !this.closing && this.queue.length >= maxQueued) await this.waitForProgress();
    if (this.failure) throw this.failure;
    if (this.closing) throw new Error("the producer is closed");
    this.queue.push(json, tag, this.http.runtime.now());
    this.enqueued++;
    this.wake.fire();
  }

  /** Resolves when every event queued so far is acknowledged (or rejected and reported). @throws the producer's failure */
  async flush(): Promise<void> {
    const target = this.enqueued;
    this.forced++;
    this.wake.fire();
    try {
      while (!this.failure && !this.aborting && this.done < target) await this.waitForProgress();
    } finally {
      this.forced--;
    }
    if (this.failure) throw this.failure;
    if (this.done < target) throw new Error("the producer was aborted before everything was acknowledged");
  }

  /** Flushes, then stops. */
  async close(): Promise<void> {
    try {
      await this.flush();
    } finally {
      this.closing = true;
      this.wake.fire();
      await this.loop;
    }
  }

  /** Stops at once: the batch in flight stays pending in the store (the next producer on it resends it); queued events are dropped. */
  async abort(): Promise<void> {
    this.aborting = this.closing = true;
    this.wake.fire();
    await this.loop;
  }

  /**
   * For pages being hidden or closed: sends what is queued at once, in batches small
   * enough for `keepalive` requests, which the browser completes after the page is gone.
   */
  setHidden(hidden: boolean): void {
    this.hidden = hidden;
    this.wake.fire();
  }

  private waitForProgress(): Promise<void> {
    return sleep(this.http.runtime, 1_000, this.wake);
  }

  private async run(): Promise<void> {
    while (!this.failure && !this.aborting) {
      if (!this.current.pending) {
        const batch = await this.nextBatch();
        if (!batch) return;
        await this.persist({ ...this.current, pending: batch, nextSeq: batch.seq + 1 });
      }
      const pending = this.current.pending as PendingBatch; // set just above or loaded from the store
      const outcome = await deliverBatch(this.deliverContext(), pending);
      if (!outcome) return;
      await this.settle(pending, outcome);
    }
  }

  /** Waits until a batch is due and cuts it, or returns null once closing with nothing queued. */
  private async nextBatch(): Promise<PendingBatch | null> {
    for (;;) {
      const limits = this.hidden ? { ...this.limits, maxBatchBytes: Math.min(this.limits.maxBatchBytes, KEEPALIVE_LIMIT_BYTES) } : this.limits;
      const dueInMs = this.queue.dueInMs(limits, this.http.runtime.now(), this.forced > 0 || this.closing || this.hidden);
      if (dueInMs === 0 && !this.aborting) {
        const { events, tag } = this.queue.cut(limits);
        return { seq: this.current.nextSeq, events, ...(tag === undefined ? {} : { tag }) };
      }
      if (this.aborting || (this.closing && this.queue.length === 0)) return null;
      await sleep(this.http.runtime, Math.min(dueInMs, 60_000), this.wake);
    }
  }

  private async settle(batch: PendingBatch, outcome: Outcome): Promise<void> {
    if (outcome.kind === "fatal") return this.fail(outcome.error);
    const next: ProducerState = { ...this.current, pending: null };
    if (outcome.kind === "acked") next.totals = addAck(next.totals, batch.events.length, outcome.answer.duplicate, recordCounts(outcome.answer));
    else next.totals = { ...next.totals, rejectedBatches: next.totals.rejectedBatches + 1, rejectedEvents: next.totals.rejectedEvents + batch.events.length };
    if (batch.tag !== undefined) next.ackedTag = batch.tag;
    await this.persist(next);
    this.done += batch.events.length;
    if (outcome.kind === "acked") this.options.onAck?.(batch, outcome.answer);
    else this.options.onRejected?.(batch, outcome.error);
    this.wake.fire();
  }

  private fail(error: Error): void {
    this.failure = error;
    this.wake.fire();
  }

  private async persist(state: ProducerState): Promise<void> {
    await this.store.save(state);
    this.current = state;
  }

  private deliverContext(): DeliverContext {
    const { http, current, options } = this;
    const context: DeliverContext = { http, stream: current.stream, producerId: current.producerId, backoff: options.backoff ?? DEFAULT_BACKOFF, keepalive: () => this.hidden, aborted: () => this.aborting };
    if (options.onRetry) context.onRetry = options.onRetry;
    return context;
  }
}

/** The least value of each limit: below it (or not a whole number) a limit could never cut a batch. */
const LEAST = { maxBatchEvents: 1, maxBatchBytes: 1, lingerMs: 0, maxQueuedEvents: 1 } as const;

/** Limits that could never cut a batch (0, negative, NaN) are refused before anything is sent. */
function checkLimits(options: ProducerOptions): void {
  const wrong = (Object.keys(LEAST) as (keyof typeof LEAST)[]).filter((name) => {
    const value = options[name];
    return value !== undefined && (!Number.isSafeInteger(value) || value < LEAST[name]);
  });
  if (wrong.length > 0) {
    throw invalidRequest(`producer options: ${wrong.map((name) => `${name} must be a whole number of at least ${LEAST[name]} (got ${String(options[name])})`).join("; ")}`);
  }
}
