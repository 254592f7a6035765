/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the same zod schemas the
 * routes validate with and build their answers from (served at `/v1/openapi.json`).
 */
import { z } from "zod";
import { ErrorEnvelopeSchema } from "./errors.ts";
import { CountersSchema, FaultRequestSchema, ReplicaNameSchema } from "./wire/admin.ts";
import {
  DataflowListResponseSchema,
  DataflowResponseSchema,
  DeleteDataflowResponseSchema,
  FaultResponseSchema,
  OperatorListResponseSchema,
  PutDataflowResponseSchema,
  PutStreamResponseSchema,
  ResultsResponseSchema,
  StatusQuerySchema,
  StatusResponseSchema,
  StatusSummaryResponseSchema,
  StreamListResponseSchema,
  StreamResponseSchema,
} from "./wire/api.ts";
import { StreamSchemaSchema } from "./wire/stream-schema.ts";
import { DataflowSpecSchema } from "./dataflow-checks/dataflow-spec-schema.ts";
import { NameSchema } from "./wire/dataflow-spec.ts";
import { IngestResponseSchema, ProducerHeadersSchema } from "./wire/ingest.ts";
import { ResultsQuerySchema } from "./wire/results-query.ts";
import { CursorTextSchema, SubscribeQuerySchema, SubscriptionEventSchema, SubscriptionMessageSchema } from "./wire/subscription.ts";
import { MintTokenRequestSchema, MintTokenResponseSchema, RevokeTokenResponseSchema, TokenIdSchema } from "./wire/tokens.ts";

import { errors, schemaHelpers, WITH_BODY, type JsonSchema } from "./openapi-helpers.ts";

/**
 * The order every route checks a request in (issue 26): so a request that is both invalid
 * and in conflict with stored state always gets the 400, whatever is stored.
 */
const VALIDATION_ORDER =
  "Every route checks a request in one order: first authentication (401, 403); then the whole request: path, query, headers and body, and a spec's or a batch's fit to its stream's declared schema (400, 413, 415); only then what is stored: an unknown stream or dataflow (404), an id with another spec or being deleted, a schema a dataflow would not fit, a seq below the dedup window (409). A refused request changes nothing.";

/** The schema helpers plus the path parameters several routes share. */
function helpers(definitions: Record<string, JsonSchema>) {
  const base = schemaHelpers(definitions);
  const path = (param: string, schema: z.ZodType, description: string) => ({ ...base.parametersOf(z.object({ [param]: schema }), "path")[0], description });
  return { ...base, path, dataflowId: path("id", NameSchema, "dataflow id"), streamName: path("stream", NameSchema, "stream name") };
}
type Helpers = ReturnType<typeof helpers>;

/** Dataflows. */
function dataflowPaths(h: Helpers) {
  const { json, ok, dataflowId } = h;
  return {
    "/v1/dataflows": { get: { summary: "List dataflows", responses: { "200": ok("the dataflows", DataflowListResponseSchema), ...errors([]) } } },
    "/v1/dataflows/{id}": {
      parameters: [dataflowId],
      put: {
        summary: "Create a dataflow (idempotent for the same spec)",
        requestBody: { required: true, content: json(DataflowSpecSchema, "input") },
        responses: {
          "201": ok("created", PutDataflowResponseSchema),
          "200": ok("already exists with this spec", PutDataflowResponseSchema),
          "202": ok("exists with this spec except a lower partition count: its new partitions were created and key groups are moving to them while ingest goes on (status `rescaling`; `GET /v1/status` shows the moves); or exists with this very spec while its moves still run, or after moves were given up (then moves that even out the groups are queued)", PutDataflowResponseSchema),
          ...errors(["400", "409", ...WITH_BODY], {
            "400": "invalid spec (INVALID_REQUEST, INVALID_JSON), or one that does not fit its stream's declared schema (INVALID_REQUEST): a field it reads that is undeclared, optional or of another type, or that no event can hold (its nearest declared ancestor not an object, or an object declaring fields of its own with additionalFields false); for a stage (`from`), an upstream that does not exist, is being deleted or is the stage itself, or a field its upstreams' results do not carry",
            "409": "a valid spec (every 400 check passed first) under an id that exists with another spec, or is being deleted (SPEC_CONFLICT); a new partition count that cannot be applied: lower than the current one, above the dataflow's key-group count, for a stage or a dataflow stages read, or for a custom operator that cannot move keys' state (SPEC_CONFLICT); or while an earlier rescale's moves are still running (RESCALE_IN_PROGRESS, retryable)",
          }),
        },
      },
      get: { summary: "Show a dataflow", responses: { "200": ok("the dataflow", DataflowResponseSchema), ...errors(["400", "404"], { "404": "no such dataflow" }) } },
      delete: {
        summary: "Delete a dataflow and its replicas' state",
        responses: {
          "200": ok("deleted", DeleteDataflowResponseSchema),
          "202": ok("some replicas still to clear", DeleteDataflowResponseSchema),
          ...errors(["400", "404", "409", "413"], { "404": "no such dataflow", "409": "stages read its results (DATAFLOW_IN_USE, `details.readers` names them): delete them first" }),
        },
      },
    },
  };
}

/** Streams and operators. */
function streamPaths(h: Helpers) {
  const { json, ok, streamName } = h;
  return {
    "/v1/streams": { get: { summary: "List streams with a declared schema", responses: { "200": ok("the streams", StreamListResponseSchema), ...errors([]) } } },
    "/v1/streams/{stream}": {
      parameters: [streamName],
      put: {
        summary: "Declare (or replace) a stream's event schema; events are then validated against it",
        requestBody: { required: true, content: json(StreamSchemaSchema, "input") },
        responses: {
          "201": ok("declared", PutStreamResponseSchema),
          "200": ok("replaced, or unchanged", PutStreamResponseSchema),
          ...errors(["400", "409", ...WITH_BODY], {
            "409": "a dataflow reading the stream would not fit the new schema (SPEC_CONFLICT): a field it reads would be undeclared, optional or of another type, or no event could hold it (its nearest declared ancestor not an object, or an object declaring fields of its own with additionalFields false)",
          }),
        },
      },
      get: { summary: "Show a stream's schema", responses: { "200": ok("the stream", StreamResponseSchema), ...errors(["400", "404"], { "404": "no declared schema" }) } },
    },
    "/v1/operators": { get: { summary: "Registered custom operators and their parameters", responses: { "200": ok("the operators", OperatorListResponseSchema), ...errors([]) } } },
  };
}

/** Ingest and results. */
function ingestPaths(h: Helpers) {
  const { ok, parametersOf, dataflowId, streamName } = h;
  return {
    "/v1/streams/{stream}/events": {
      post: {
        summary: "Post a batch of events (JSON array or NDJSON); idempotent per Flux-Producer-Id and Flux-Seq",
        parameters: [streamName, ...parametersOf(ProducerHeadersSchema, "header")],
        requestBody: {
          required: true,
          content: {
            "application/json": { schema: { type: "array", minItems: 1, items: { type: "object" }, description: "at most FLUX_MAX_BATCH_EVENTS events (413 beyond)" } },
            "application/x-ndjson": { schema: { type: "string", description: "one JSON object per line; blank lines are ignored" } },
            "application/ndjson": { schema: { type: "string", description: "the same as application/x-ndjson" } },
            "application/jsonl": { schema: { type: "string", description: "the same as application/x-ndjson" } },
          },
        },
        responses: {
          "200": ok("held by every replica of every partition it touches (see `replicated`)", IngestResponseSchema),
          ...errors(["400", "404", "409", ...WITH_BODY], {
            "404": "no dataflow reads the stream",
            "409": "seq below the dedup window",
            "415": "the body is neither application/json nor NDJSON",
          }),
        },
      },
    },
    "/v1/dataflows/{id}/results": {
      get: {
        summary: "Window results in (window start, key) order, in pages",
        parameters: [dataflowId, ...parametersOf(ResultsQuerySchema, "query")],
        responses: { "200": ok("a page of at most `limit` results; `next` is the cursor to pass as `after` for the next page, null on the last page (also when it holds exactly `limit` results)", ResultsResponseSchema), ...errors(["400", "404"], { "404": "no such dataflow" }) },
      },
    },
  };
}

/** The live feed. */
function subscribePaths(h: Helpers) {
  const { schemaOf, parametersOf, dataflowId } = h;
  return {
    "/v1/dataflows/{id}/subscribe": {
      get: {
        summary: "Closed windows as Server-Sent Events from a cursor (query `cursor` or header Last-Event-ID); each event's id is the cursor after it. With `Upgrade: websocket`, the same as WebSocket text messages `{type: \"window\", cursor, ...event}`, then `{type: \"end\", cursor}`",
        parameters: [dataflowId, ...parametersOf(SubscribeQuerySchema, "query"), { name: "last-event-id", in: "header", required: false, schema: schemaOf(CursorTextSchema, "input") }],
        responses: {
          "200": { description: "text/event-stream of `window` events", content: { "text/event-stream": { schema: schemaOf(SubscriptionEventSchema, "output") } } },
          "101": {
            description: "switched to a WebSocket (request sent `Upgrade: websocket`); each text message is one of these",
            content: { "application/json": { schema: schemaOf(SubscriptionMessageSchema, "output") } },
          },
          ...errors(["400", "404"], { "404": "no such dataflow" }),
        },
      },
    },
  };
}

/** Status, fault injection and this document. */
function operationsPaths(h: Helpers) {
  const { json, ok, parametersOf, path } = h;
  return {
    "/v1/status": {
      get: {
        summary: "Partitions, replicas, epochs, LSNs and recent fail-overs",
        parameters: parametersOf(StatusQuerySchema, "query"),
        responses: { "200": ok("status (`view=summary`: one line per partition)", z.union([StatusResponseSchema, StatusSummaryResponseSchema])), ...errors(["400"]) },
      },
    },
    "/v1/admin/replicas/{name}/fault": {
      post: {
        summary: "Inject a fault (only when FLUX_ENABLE_FAULTS is true; admin token)",
        parameters: [path("name", ReplicaNameSchema, "replica name, URL-encoded")],
        requestBody: { required: true, content: json(FaultRequestSchema, "input") },
        responses: { "200": ok("injected", FaultResponseSchema), ...errors(["400", "404", ...WITH_BODY], { "404": "faults disabled, or no such replica" }) },
      },
    },
    "/v1/admin/counters": {
      get: {
        summary:
          "This isolate's cost counters since it started: Durable Object calls by method, SQLite rows read and written, Worker requests (only when FLUX_ENABLE_FAULTS is true; admin token). Locally one workerd isolate runs the Worker and every object, so they count everything",
        responses: { "200": ok("counters", CountersSchema), ...errors(["403", "404"], { "404": "faults disabled" }) },
      },
    },
    "/v1/openapi.json": { get: { summary: "This document", security: [], responses: { "200": { description: "OpenAPI 3.1" }, "400": errors([], { "400": "a WebSocket upgrade (only the subscribe route takes one)" })["400"], "500": errors([])["500"] } } },
  };
}

/** Minting and revoking scoped tokens. */
function tokenPaths(h: Helpers) {
  const { json, ok, path } = h;
  return {
    "/v1/admin/tokens": {
      post: {
        summary: "Mint a signed token limited to ingest into named streams, reading named dataflows, or admin, for ttlSeconds (FLUX_ADMIN_TOKEN only)",
        requestBody: { required: true, content: json(MintTokenRequestSchema, "input") },
        responses: { "200": ok("the token, its id (to revoke it by) and its expiry (epoch ms)", MintTokenResponseSchema), ...errors(["400", ...WITH_BODY], { "503": "FLUX_TOKEN_SECRETS is not configured, or unavailable" }) },
      },
    },
    "/v1/admin/tokens/{id}/revoke": {
      post: {
        summary:
          "Revoke one minted token by its id (FLUX_ADMIN_TOKEN only; no body). The router that answers refuses it at once, every router from effectiveEverywhereAtMs (FLUX_REVOCATION_CACHE_MS after the revocation), with 401 UNAUTHORIZED and details.reason 'revoked'; subscriptions opened with it end within one poll after that. Idempotent",
        parameters: [path("id", TokenIdSchema, "the token's id, from the mint answer")],
        responses: {
          "200": ok("revoked now (`status: revoked`), or already (`already-revoked`, with the first revocation's times)", RevokeTokenResponseSchema),
          ...errors(["400"], { "400": "an id that is not 16 base64url characters, a body, or a query parameter (INVALID_REQUEST)", "403": "any token but FLUX_ADMIN_TOKEN" }),
        },
      },
    },
  };
}

/** Builds the document. */
export function buildOpenApi(): Record<string, unknown> {
  const definitions: Record<string, JsonSchema> = {};
  const h = helpers(definitions);
  const paths = { ...dataflowPaths(h), ...streamPaths(h), ...ingestPaths(h), ...subscribePaths(h), ...operationsPaths(h), ...tokenPaths(h) };
  const errorSchema = h.schemaOf(ErrorEnvelopeSchema, "output");
  return {
    openapi: "3.1.0",
    info: { title: "Flux on Workers", version: "1", description: `Fault-tolerant, exactly-once windowed aggregation over event streams. ${VALIDATION_ORDER}` },
    security: [{ bearer: [] }],
    components: {
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "FLUX_API_TOKEN (every route outside /v1/admin), FLUX_ADMIN_TOKEN (every route), or a signed token from POST /v1/admin/tokens (its scope, until it expires or is revoked)",
        },
      },
      schemas: { Error: errorSchema, ...definitions },
    },
    paths,
  };
}
