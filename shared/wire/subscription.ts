/**
 * Subscription cursors (issue 6): the last output sequence number a subscriber has seen
 * for each partition, written `seq,seq,...` in partition order. Outputs are numbered the
 * same on every replica of a partition, so a cursor survives a fail-over unchanged.
 */
import * as z from "zod";
import { AggregateValueSchema } from "./window-result.ts";

/** A cursor string as it appears in `?cursor=` or `Last-Event-ID`. */
export const CursorTextSchema = z.string().max(2_000).regex(/^\d{1,15}(,\d{1,15})*$/, "a cursor like 0,12,3 (one number per partition)");

/** The query of `GET /v1/dataflows/{id}/subscribe`. */
export const SubscribeQuerySchema = z.strictObject({
  cursor: CursorTextSchema.optional(),
  /** How long this response streams before it ends (the client reconnects with its cursor), ms, at most 300000. */
  maxMs: z
    .string()
    .regex(/^(\d{1,5}|[012]\d{5}|300000)$/, "milliseconds, at most 300000")
    .transform(Number)
    .optional(),
  /** A signed read token for browsers' EventSource (checked by functions/auth.ts, which never logs it). */
  access_token: z
    .string()
    .meta({
      description:
        "a signed read token for this dataflow, for clients that cannot set Authorization (EventSource); a WebSocket may instead offer the subprotocols `flux.v1` and `flux-token.<token>`, and the server selects `flux.v1`. Long-lived tokens are refused here",
    })
    .optional(),
});

/**
 * Reads a cursor for a dataflow of `partitions` partitions; absent means from the start. A
 * cursor naming fewer partitions was taken before the dataflow grew (issue 28): the new
 * partitions are read from their first output.
 * @returns null when it names more partitions than the dataflow has.
 */
export function parseCursor(text: string | undefined, partitions: number): number[] | null {
  if (text === undefined || text === "") return new Array<number>(partitions).fill(0);
  const seqs = text.split(",").map(Number);
  if (seqs.length > partitions) return null;
  return [...seqs, ...new Array<number>(partitions - seqs.length).fill(0)];
}

/** Writes a cursor. */
export function formatCursor(seqs: readonly number[]): string {
  return seqs.join(",");
}

/** One `window` event of the stream: a closed window and where it sits in its partition's output. */
export const SubscriptionEventSchema = z.object({
  partition: z.number().int(),
  outputSeq: z.number().int(),
  key: z.string(),
  windowStartMs: z.number(),
  windowEndMs: z.number(),
  values: z.record(z.string(), AggregateValueSchema),
});
export type SubscriptionEvent = z.infer<typeof SubscriptionEventSchema>;

/** One text message of the WebSocket variant: a window with the cursor after it, or the end of the stream. */
export const SubscriptionMessageSchema = z.discriminatedUnion("type", [
  SubscriptionEventSchema.extend({ type: z.literal("window"), cursor: z.string() }),
  z.object({ type: z.literal("end"), cursor: z.string() }),
]);
export type SubscriptionMessage = z.infer<typeof SubscriptionMessageSchema>;
