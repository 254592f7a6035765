/**
 * Sends one batch until it has an outcome: resent with the same seq (its idempotency key)
 * after every retryable failure, waiting full-jitter backoff and at least `Retry-After`.
 * Every answer is classified as in docs/CLIENT.md ("How the producer handles errors").
 */
import { backoffDelayMs, type BackoffOptions } from "./backoff.ts";
import { utf8Length } from "./batch-queue.ts";
import { FluxClientError } from "./client-error.ts";
import type { HttpClient } from "./http.ts";
import { parseAnswer } from "./http.ts";
import { IngestAnswerSchema, type IngestAnswer } from "./ingest-answer.ts";
import type { PendingBatch } from "./producer-store.ts";
import { sleep } from "./runtime.ts";

/**
 * `acked`: applied (or applied before: `answer.duplicate`). `rejected`: refused as a
 * whole and nothing applied (400, 413, 415): resending cannot help, later batches can
 * still go. `fatal`: the producer cannot go on (auth, unknown stream, `SEQ_TOO_OLD`, a
 * server bug); the batch stays pending in the store so a restart resends it.
 */
export type Outcome = { kind: "acked"; answer: IngestAnswer } | { kind: "rejected"; error: FluxClientError } | { kind: "fatal"; error: FluxClientError };

/** What delivery needs from its producer. */
export interface DeliverContext {
  http: HttpClient;
  stream: string;
  producerId: string;
  backoff: BackoffOptions;
  /** Whether to send with `keepalive` (the page is being hidden or closed). */
  keepalive(): boolean;
  /** Told before each wait for a retry. */
  onRetry?(error: FluxClientError, attempt: number, delayMs: number): void;
  /** True once the producer was aborted: stop retrying. */
  aborted(): boolean;
}

/** Most body bytes a `keepalive` request may carry in browsers. */
export const KEEPALIVE_LIMIT_BYTES = 64 * 1024;

/** Whether a refusal is about this batch only (nothing applied) rather than the producer. */
function isBatchRejection(error: FluxClientError): boolean {
  return error.status === 400 || error.status === 413 || error.status === 415;
}

/** Sends `batch` until acknowledged, rejected, fatal, or aborted (then null). */
export async function deliverBatch(ctx: DeliverContext, batch: PendingBatch): Promise<Outcome | null> {
  const text = `[${batch.events.join(",")}]`;
  for (let attempt = 0; !ctx.aborted(); attempt++) {
    try {
      const res = await ctx.http.send("POST", `/v1/streams/${encodeURIComponent(ctx.stream)}/events`, {
        rawBody: { text, contentType: "application/json" },
        headers: { "flux-producer-id": ctx.producerId, "flux-seq": String(batch.seq) },
        keepalive: ctx.keepalive() && utf8Length(text) <= KEEPALIVE_LIMIT_BYTES,
      });
      return { kind: "acked", answer: await parseAnswer(IngestAnswerSchema, res) };
    } catch (err) {
      if (!(err instanceof FluxClientError)) throw err;
      if (!err.retryable) return isBatchRejection(err) ? { kind: "rejected", error: err } : { kind: "fatal", error: err };
      const delayMs = backoffDelayMs(attempt, ctx.backoff, ctx.http.runtime.random(), err.retryAfterMs);
      ctx.onRetry?.(err, attempt, delayMs);
      await sleep(ctx.http.runtime, delayMs);
    }
  }
  return null;
}
