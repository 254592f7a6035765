/**
 * The ingest route's `Flux-Producer-Id` and `Flux-Seq`, checked as `zValidator("header")`
 * checked them, with the same 400 (`invalidAnswer`), but reading only these two headers: Hono's
 * header validator copies every header of the request into an object first, about 1.5% of
 * all CPU at P=4, R=2 (issue 12's profile).
 */
import type { Context } from "hono";
import { ProducerHeadersSchema } from "../shared/wire/ingest.ts";
import { invalidAnswer } from "./http-errors.ts";

/** The batch's idempotency key from its producer headers, or the 400 that names what is wrong with them. */
export function producerKey(c: Context): { producer: string; seq: number } | Response {
  const headers = { "flux-producer-id": c.req.header("flux-producer-id"), "flux-seq": c.req.header("flux-seq") };
  const result = ProducerHeadersSchema.safeParse(headers);
  if (result.success) return { producer: result.data["flux-producer-id"], seq: result.data["flux-seq"] };
  return invalidAnswer(c, "header", result.error, headers);
}
