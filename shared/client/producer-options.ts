/** Settings of a {@link Producer} (`producer.ts`); every limit has a default. */
import type { BackoffOptions } from "./backoff.ts";
import type { BatchLimits } from "./batch-queue.ts";
import type { FluxClientError } from "./client-error.ts";
import type { IngestAnswer } from "./ingest-answer.ts";
import type { PendingBatch, ProducerStore } from "./producer-store.ts";

/** Producer settings; every limit has a default. */
export interface ProducerOptions extends Partial<BatchLimits> {
  stream: string;
  /** Used when the store holds no state; otherwise the stored id wins. Default: `flux-` + 16 random hex digits. */
  producerId?: string;
  store?: ProducerStore;
  /** Most events waiting in memory before `send` waits (default 10,000). */
  maxQueuedEvents?: number;
  backoff?: BackoffOptions;
  /** Each acknowledged batch, with the server's answer. */
  onAck?(batch: PendingBatch, answer: IngestAnswer): void;
  /** Each batch refused as a whole (400, 413, 415): it was not applied and is dropped. */
  onRejected?(batch: PendingBatch, error: FluxClientError): void;
  onRetry?(error: FluxClientError, attempt: number, delayMs: number): void;
}

/** Batches of at most 500 events and 512 KiB, cut 50 ms after their first event at the latest. */
export const DEFAULT_LIMITS: BatchLimits = { maxBatchEvents: 500, maxBatchBytes: 512 * 1024, lingerMs: 50 };

