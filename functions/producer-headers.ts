/**
 * The ingest route's `Flux-Producer-Id` and `Flux-Seq`, checked as `zValidator("header")`
 * checked them, with the same 400 (`invalidAnswer`), but reading only these two headers: Hono's
 * header validator copies every header of the request into an object first, about 1.5% of the
 * profiled samples at P=4, R=2 (issue 12's profile). Valid headers, the usual case, skip the schema
 * too (`validProducerKey`; running it was another 1.5% of the samples): only invalid ones go
 * through it, for its messages. Without the profiler neither cut shows beyond the noise.
 */
import type { Context } from "hono";
import { ProducerHeadersSchema, validProducerKey } from "../shared/wire/ingest.ts";
import { invalidAnswer } from "./http-errors.ts";

/** The batch's idempotency key from its producer headers, or the 400 that names what is wrong with them. */
export function producerKey(c: Context): { producer: string; seq: number } | Response {
  const producer = c.req.header("flux-producer-id");
  const digits = c.req.header("flux-seq");
  const valid = validProducerKey(producer, digits);
  if (valid) return valid;
  const headers = { "flux-producer-id": producer, "flux-seq": digits };
  const result = ProducerHeadersSchema.safeParse(headers);
  if (result.success) return { producer: result.data["flux-producer-id"], seq: result.data["flux-seq"] };
  return invalidAnswer(c, "header", result.error, headers);
}
