/**
 * `POST /v1/streams/{stream}/events`: validates the whole batch first (nothing is sent
 * on any error), then runs the replication protocol for every partition it touches and
 * answers 200 only when each holds it on all its replicas.
 */
import { Hono, type Context, type MiddlewareHandler } from "hono";
import { zValidator } from "@hono/zod-validator";
import { z } from "zod";
import { DeadlineTimer } from "../../platform/deadline-timer.ts";
import { FluxError } from "../../shared/errors.ts";
import { isNdjson, parseEventsBody } from "../../shared/ingest/parse-body.ts";
import { routeEvents } from "../../shared/ingest/route-events.ts";
import { isName, NameSchema } from "../../shared/wire/dataflow-spec.ts";
import { ingestAnswer } from "../../shared/router/ingest-answer.ts";
import type { AppEnv } from "../app-env.ts";
import { checkStreamEvents } from "../../shared/ingest/check-stream-events.ts";
import { countRefusal, keepRunning, replicaPort, reportFailure, reportSuspect, routeStream } from "../cluster.ts";
import { onInvalid } from "../http-errors.ts";
import { noQueryParameters } from "../no-query.ts";
import { producerKey } from "../producer-headers.ts";
import { decodeUtf8, mediaTypeOf, requireUtf8Charset } from "../json-body.ts";
import { writeBatch } from "../../shared/router/write-batch.ts";
import type { InProgress } from "../../shared/router/write-coalescer.ts";
import { keyGroupMapOf } from "../../shared/keygroups/key-groups.ts";

/** What a check run as a middleware calls when it passes: nothing (the handler goes on). */
const noop = async () => {};
const checkStream: MiddlewareHandler = zValidator("param", z.object({ stream: NameSchema }), onInvalid);

export const eventsRoutes = new Hono<AppEnv>()
  // Every refused batch that reached this route is counted (by stream and code) for the dashboard;
  // other methods on the path are not batches (their 404 is not counted).
  .use("/:stream/events", async (c, next) => {
    await next();
    if (c.req.method !== "POST" || c.res.status < 400) return;
    const stream = NameSchema.safeParse(c.req.param("stream"));
    const code = c.error instanceof FluxError ? c.error.code : await envelopeCode(c.res);
    countRefusal(c.env, stream.success ? stream.data : "*", code, keepRunning(c));
  })
  .post("/:stream/events", async (c) => {
    // In this order: the stream's name, the query string, the producer headers. A valid name
    // (the usual case) skips the validator, about 1% of the profiled samples at P=4, R=2 (issue 12's profile).
    const stream = c.req.param("stream");
    const refused = (isName(stream) ? undefined : await checkStream(c, noop)) ?? (await noQueryParameters(c, noop));
    if (refused) return refused;
    const key = producerKey(c);
    if (key instanceof Response) return key;
    // While this request is in progress, other requests' writes to an idle primary may wait briefly for its sub-batches.
    const request = c.get("coalescer").enter();
    try {
      return c.json(await ingest(c, stream, key, request));
    } finally {
      request.leave();
    }
  });

/** Parses, routes and writes one posted batch; `request` is its entry in the isolate's coalescer. */
async function ingest(c: Context<AppEnv>, stream: string, { producer, seq }: { producer: string; seq: number }, request: InProgress) {
  const config = c.get("config");
  const contentType = c.req.header("content-type");
  const ndjson = isNdjson(contentType);
  if (!ndjson && mediaTypeOf(contentType) !== "application/json") {
    throw new FluxError("UNSUPPORTED_MEDIA_TYPE", "send application/json (an array of events) or application/x-ndjson");
  }
  requireUtf8Charset(contentType);
  const events = parseEventsBody(decodeUtf8(await c.req.arrayBuffer()), ndjson);
  if (events.length === 0) throw new FluxError("INVALID_REQUEST", "the batch has no events");
  if (events.length > config.maxBatchEvents) {
    throw new FluxError("PAYLOAD_TOO_LARGE", `batch has ${events.length} events; the limit is ${config.maxBatchEvents}`, {
      limit: config.maxBatchEvents,
    });
  }
  const { dataflows, schema } = await routeStream(c.env, config, c.get("routingCache"), stream, false);
  // The events against the stream's declared schema first: the request is judged whole before what is stored (no reader) answers (issue 26).
  if (schema) checkStreamEvents(stream, schema, events);
  if (dataflows.length === 0) throw new FluxError("UNKNOWN_STREAM", `no dataflow reads stream '${stream}'`);
  const receivedAtMs = Date.now();
  const routed = dataflows.map((record) => ({
    record,
    subBatches: routeEvents(record.spec, events, receivedAtMs, config.maxKeyLength, keyGroupMapOf(record)),
  }));
  const keep = keepRunning(c);
  // One timer for this request's call deadlines and slow-call watches.
  const timer = new DeadlineTimer();
  const port = replicaPort(c.env, config, timer, (replica) => c.get("suspects").verdict(replica, () => reportSuspect(c.env, keep, replica)));
  // Concurrent sub-batches for the same primary share a call, made with the port of one of their requests.
  // Each waiting sub-batch polls on a timer of its own: polling on the request's shared timer woke a
  // request's waiters together and merged fewer sub-batches per call (P=16, R=2, three alternating
  // 3 s rounds on a loaded machine: 1.6-2.0 against 2.5-3.3; again in issue 12's sixth session,
  // 37.1 against 27.8 write calls per 1,000 events).
  const send = c.get("coalescer").sendVia(port, (ms, fire) => void setTimeout(fire, ms), request);
  const results = await writeBatch(send, routed, { producer, seq }, () =>
    routeStream(c.env, config, c.get("routingCache"), stream, true).then((routing) => routing.dataflows),
  ).catch((err: unknown) => {
    if (err instanceof FluxError && err.code === "UNAVAILABLE") {
      // Fresh routing for the client's retry, and a probe now rather than at the next heartbeat.
      c.get("routingCache").expire(stream);
      reportFailure(c.env, keep, dataflows.map((d) => d.id), err.replica);
    }
    throw err;
  });
  return ingestAnswer({ stream, producer, seq, events: events.length }, routed, results);
}

/** The code of an error answered without a thrown error (a validator's 400): the envelope's, read from a copy. */
async function envelopeCode(res: Response): Promise<string> {
  const body: unknown = await res.clone().json().catch(() => null);
  const error = typeof body === "object" && body !== null && "error" in body ? body.error : null;
  const code = typeof error === "object" && error !== null && "code" in error ? error.code : null;
  return typeof code === "string" ? code : "INTERNAL";
}
