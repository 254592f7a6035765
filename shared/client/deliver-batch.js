/**
 * Sends one batch until it has an outcome: resent with the same seq (its idempotency key)
 * after every retryable failure, waiting full-jitter backoff and at least `Retry-After`.
 * Every answer is classified as in docs/CLIENT.md ("How the producer handles errors").
 */
import { backoffDelayMs } from "./backoff.ts";
import { utf8Length } from "./batch-queue.ts";
import { FluxClientError } from "./client-error.ts";
import { parseAnswer } from "./http.ts";
import { IngestAnswerSchema } from "./ingest-answer.ts";
import { sleep } from "./runtime.ts";
/** Most body bytes a `keepalive` request may carry in browsers. */
export const KEEPALIVE_LIMIT_BYTES = 64 * 1024;
/** Whether a refusal is about this batch only (nothing applied) rather than the producer. */
function isBatchRejection(error) {
    return error.status === 400 || error.status === 413 || error.status === 415;
}
/** Sends `batch` until acknowledged, rejected, fatal, or aborted (then null). */
export async function deliverBatch(ctx, batch) {
    const text = `[${batch.events.join(",")}]`;
    for (let attempt = 0; !ctx.aborted(); attempt++) {
        try {
            const res = await ctx.http.send("POST", `/v1/streams/${encodeURIComponent(ctx.stream)}/events`, {
                rawBody: { text, contentType: "application/json" },
                headers: { "flux-producer-id": ctx.producerId, "flux-seq": String(batch.seq) },
                keepalive: ctx.keepalive() && utf8Length(text) <= KEEPALIVE_LIMIT_BYTES,
            });
            return { kind: "acked", answer: await parseAnswer(IngestAnswerSchema, res) };
        }
        catch (err) {
            if (!(err instanceof FluxClientError))
                throw err;
            if (!err.retryable)
                return isBatchRejection(err) ? { kind: "rejected", error: err } : { kind: "fatal", error: err };
            const delayMs = backoffDelayMs(attempt, ctx.backoff, ctx.http.runtime.random(), err.retryAfterMs);
            ctx.onRetry?.(err, attempt, delayMs);
            await sleep(ctx.http.runtime, delayMs);
        }
    }
    return null;
}
