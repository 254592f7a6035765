/**
 * `GET /v1/dataflows/{id}/subscribe`: closed windows as Server-Sent Events, from a
 * cursor (`?cursor=` or the `Last-Event-ID` a reconnecting EventSource sends). Each
 * partition is read from its current primary, strictly in output order, so a subscriber
 * that reconnects with its last event id sees no gap and no repeat, across fail-overs too.
 */
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { zValidator } from "@hono/zod-validator";
import { z } from "zod";
import { withDeadline } from "../../durable-objects/replica-client.ts";
import { FluxError } from "../../shared/errors.ts";
import { NameSchema } from "../../shared/wire/dataflow-spec.ts";
import type { PartitionRoute } from "../../shared/wire/routing.ts";
import { CursorTextSchema, formatCursor, parseCursor, type SubscriptionEvent } from "../../shared/wire/subscription.ts";
import type { AppEnv } from "../app-env.ts";
import { askCoordinator, readableDataflow } from "../cluster.ts";
import { onInvalid } from "../http-errors.ts";

/** How often partitions are polled when nothing new arrived, ms. */
const POLL_MS = 250;
/** Outputs read from one partition per call. */
const PAGE = 200;

const QuerySchema = z.strictObject({
  cursor: CursorTextSchema.optional(),
  /** How long this response streams before it ends (the client reconnects with its cursor), ms. */
  maxMs: z.string().regex(/^\d{1,6}$/, "milliseconds, at most 300000").transform(Number).refine((ms) => ms <= 300_000, "at most 300000").optional(),
});

export const subscribeRoutes = new Hono<AppEnv>().get(
  "/:id/subscribe",
  zValidator("param", z.object({ id: NameSchema }), onInvalid),
  zValidator("query", QuerySchema, onInvalid),
  async (c) => {
    const { id } = c.req.valid("param");
    const { cursor: fromQuery, maxMs = 60_000 } = c.req.valid("query");
    const record = await readableDataflow(c.env, id);
    const lastEventId = c.req.header("last-event-id");
    const text = lastEventId ?? fromQuery;
    if (text !== undefined && !CursorTextSchema.safeParse(text).success) throw new FluxError("INVALID_REQUEST", "the cursor must look like 0,12,3");
    const cursor = parseCursor(text, record.spec.partitions);
    if (!cursor) throw new FluxError("INVALID_REQUEST", `the cursor must have one number per partition (${record.spec.partitions})`);
    const timeoutMs = c.var.config.replicaTimeoutMs;
    const env = c.env;

    return streamSSE(c, async (stream) => {
      let routes: PartitionRoute[] = record.routes;
      const endAt = Date.now() + maxMs;
      while (!stream.aborted && Date.now() < endAt) {
        let progressed = false;
        let refresh = false;
        for (const route of routes) {
          try {
            const stub = env.PARTITION_REPLICA.getByName(route.primary);
            const page = await withDeadline(async () => stub.readOutputPage(route.epoch, cursor[route.partition] ?? 0, PAGE), timeoutMs, `replica ${route.primary}`);
            if (page.status !== "ok") {
              refresh = true;
              continue;
            }
            for (const { outputSeq, result } of page.outputs) {
              // Strictly the next one: never skip ahead of what this subscriber has seen.
              if (outputSeq !== (cursor[route.partition] ?? 0) + 1) break;
              cursor[route.partition] = outputSeq;
              const event: SubscriptionEvent = { partition: route.partition, outputSeq, key: result.key, windowStartMs: result.windowStartMs, windowEndMs: result.windowEndMs, values: result.values };
              await stream.writeSSE({ id: formatCursor(cursor), event: "window", data: JSON.stringify(event) });
              progressed = true;
            }
          } catch {
            refresh = true; // this partition is failing over or down; try again after the pause
          }
        }
        if (refresh) routes = (await askCoordinator(env, (co) => co.getDataflow(id)).catch(() => null))?.routes ?? routes;
        if (!progressed) await stream.sleep(POLL_MS);
      }
    });
  },
);
