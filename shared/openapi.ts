/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the same zod schemas the
 * routes validate with and build their answers from (served at `/v1/openapi.json`).
 */
import { z } from "zod";
import { ErrorEnvelopeSchema } from "./errors.ts";
import { FaultRequestSchema } from "./wire/admin.ts";
import {
  DataflowListResponseSchema,
  DataflowResponseSchema,
  DeleteDataflowResponseSchema,
  FaultResponseSchema,
  OperatorListResponseSchema,
  PutDataflowResponseSchema,
  PutStreamResponseSchema,
  ResultsResponseSchema,
  StatusResponseSchema,
  StreamListResponseSchema,
  StreamResponseSchema,
} from "./wire/api.ts";
import { StreamSchemaSchema } from "./wire/stream-schema.ts";
import { DataflowSpecSchema } from "./wire/dataflow-spec.ts";
import { IngestResponseSchema, ProducerHeadersSchema } from "./wire/ingest.ts";
import { ResultsQuerySchema } from "./wire/results-query.ts";
import { CursorTextSchema, SubscriptionEventSchema, SubscriptionMessageSchema } from "./wire/subscription.ts";
import { MintTokenRequestSchema, MintTokenResponseSchema } from "./wire/tokens.ts";

type JsonSchema = Record<string, unknown>;

/**
 * Schema helpers writing into `definitions`: JSON Schema 2020-12 (OpenAPI 3.1's dialect)
 * of what a client sends (`input`) or receives (`output`). Local `$defs` (recursive
 * schemas: filters) move into `definitions`, for `components.schemas`, since `#` in an
 * OpenAPI document means the document itself.
 */
function schemaHelpers(definitions: Record<string, JsonSchema>) {
  const schemaOf = (schema: z.ZodType, io: "input" | "output"): JsonSchema => {
    const { $schema: _dialect, $defs, ...rest } = z.toJSONSchema(schema, { io, target: "draft-2020-12", unrepresentable: "any" });
    const prefix = `${io}-${Object.keys(definitions).length}-`;
    const rename = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(rename);
      if (value === null || typeof value !== "object") return value;
      return Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, k === "$ref" && typeof v === "string" ? v.replace("#/$defs/", `#/components/schemas/${prefix}`) : rename(v)]),
      );
    };
    for (const [name, def] of Object.entries($defs ?? {})) definitions[prefix + name] = rename(def) as JsonSchema;
    return rename(rest) as JsonSchema;
  };
  const json = (schema: z.ZodType, io: "input" | "output") => ({ "application/json": { schema: schemaOf(schema, io) } });
  const ok = (description: string, schema: z.ZodType) => ({ description, content: json(schema, "output") });
  // Parameters from a zod object: one per property, required unless optional.
  const parametersOf = (schema: z.ZodObject, where: "query" | "header") => {
    const described = schemaOf(schema, "input");
    const properties = (described.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((described.required ?? []) as string[]);
    return Object.entries(properties).map(([name, s]) => ({ name, in: where, required: required.has(name), schema: s }));
  };
  return { schemaOf, json, ok, parametersOf };
}

const error = (description: string) => ({ description, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } });
const pathParam = (name: string, description: string) => ({ name, in: "path", required: true, description, schema: { type: "string" } });
const common = {
  "400": error("invalid request"),
  "401": error("missing, wrong, expired or tampered token"),
  "403": error("the token does not allow this request (its scope or resources)"),
  "503": error("unavailable; retry later"),
};

/** Builds the document. */
export function buildOpenApi(): Record<string, unknown> {
  const definitions: Record<string, JsonSchema> = {};
  const { schemaOf, json, ok, parametersOf } = schemaHelpers(definitions);
  const paths = {
      "/v1/dataflows": { get: { summary: "List dataflows", responses: { "200": ok("the dataflows", DataflowListResponseSchema), ...common } } },
      "/v1/dataflows/{id}": {
        parameters: [pathParam("id", "dataflow id")],
        put: {
          summary: "Create a dataflow (idempotent for the same spec)",
          requestBody: { required: true, content: json(DataflowSpecSchema, "input") },
          responses: { "201": ok("created", PutDataflowResponseSchema), "200": ok("already exists with this spec", PutDataflowResponseSchema), "409": error("exists with another spec, or being deleted"), ...common },
        },
        get: { summary: "Show a dataflow", responses: { "200": ok("the dataflow", DataflowResponseSchema), "404": error("no such dataflow"), ...common } },
        delete: {
          summary: "Delete a dataflow and its replicas' state",
          responses: { "200": ok("deleted", DeleteDataflowResponseSchema), "202": ok("some replicas still to clear", DeleteDataflowResponseSchema), "404": error("no such dataflow"), ...common },
        },
      },
      "/v1/streams": { get: { summary: "List streams with a declared schema", responses: { "200": ok("the streams", StreamListResponseSchema), ...common } } },
      "/v1/streams/{stream}": {
        parameters: [pathParam("stream", "stream name")],
        put: {
          summary: "Declare (or replace) a stream's event schema; events are then validated against it",
          requestBody: { required: true, content: json(StreamSchemaSchema, "input") },
          responses: {
            "201": ok("declared", PutStreamResponseSchema),
            "200": ok("replaced, or unchanged", PutStreamResponseSchema),
            "409": error("a dataflow reading the stream would not fit the new schema"),
            ...common,
          },
        },
        get: { summary: "Show a stream's schema", responses: { "200": ok("the stream", StreamResponseSchema), "404": error("no declared schema"), ...common } },
      },
      "/v1/operators": { get: { summary: "Registered custom operators and their parameters", responses: { "200": ok("the operators", OperatorListResponseSchema), ...common } } },
      "/v1/streams/{stream}/events": {
        post: {
          summary: "Post a batch of events (JSON array or NDJSON); idempotent per Flux-Producer-Id and Flux-Seq",
          parameters: [pathParam("stream", "stream name"), ...parametersOf(ProducerHeadersSchema, "header")],
          requestBody: {
            required: true,
            content: { "application/json": { schema: { type: "array", items: { type: "object" } } }, "application/x-ndjson": { schema: { type: "string" } } },
          },
          responses: {
            "200": ok("held by every replica of every partition it touches (see `replicated`)", IngestResponseSchema),
            "404": error("no dataflow reads the stream"),
            "409": error("seq below the dedup window"),
            "413": error("body or batch too large"),
            "415": error("unsupported content type"),
            ...common,
          },
        },
      },
      "/v1/dataflows/{id}/results": {
        get: {
          summary: "Window results in (window start, key) order, in pages",
          parameters: [pathParam("id", "dataflow id"), ...parametersOf(ResultsQuerySchema, "query")],
          responses: { "200": ok("a page of results", ResultsResponseSchema), "404": error("no such dataflow"), ...common },
        },
      },
      "/v1/dataflows/{id}/subscribe": {
        get: {
          summary:
            "Closed windows as Server-Sent Events from a cursor (query `cursor` or header Last-Event-ID); each event's id is the cursor after it. With `Upgrade: websocket`, the same as WebSocket text messages `{type: \"window\", cursor, ...event}`, then `{type: \"end\", cursor}`",
          parameters: [
            pathParam("id", "dataflow id"),
            { name: "cursor", in: "query", required: false, schema: schemaOf(CursorTextSchema, "input") },
            { name: "maxMs", in: "query", required: false, schema: { type: "string", pattern: "^\\d{1,6}$" } },
            {
              name: "access_token",
              in: "query",
              required: false,
              description: "a signed read token for this dataflow, for clients that cannot set Authorization (EventSource); a WebSocket may instead offer the subprotocols `flux.v1` and `flux-token.<token>`, and the server selects `flux.v1`. Long-lived tokens are refused here",
              schema: { type: "string" },
            },
          ],
          responses: {
            "200": { description: "text/event-stream of `window` events", content: { "text/event-stream": { schema: schemaOf(SubscriptionEventSchema, "output") } } },
            "101": {
              description: "switched to a WebSocket (request sent `Upgrade: websocket`); each text message is one of these",
              content: { "application/json": { schema: schemaOf(SubscriptionMessageSchema, "output") } },
            },
            "404": error("no such dataflow"),
            ...common,
          },
        },
      },
      "/v1/status": { get: { summary: "Partitions, replicas, epochs, LSNs and recent fail-overs", responses: { "200": ok("status", StatusResponseSchema), ...common } } },
      "/v1/admin/replicas/{name}/fault": {
        post: {
          summary: "Inject a fault (only when FLUX_ENABLE_FAULTS is true; admin token)",
          parameters: [pathParam("name", "replica name, URL-encoded")],
          requestBody: { required: true, content: json(FaultRequestSchema, "input") },
          responses: { "200": ok("injected", FaultResponseSchema), "404": error("faults disabled, or no such replica"), ...common },
        },
      },
      "/v1/admin/tokens": {
        post: {
          summary: "Mint a signed token limited to ingest into named streams, reading named dataflows, or admin, for ttlSeconds (FLUX_ADMIN_TOKEN only)",
          requestBody: { required: true, content: json(MintTokenRequestSchema, "input") },
          responses: { "200": ok("the token and its expiry (epoch ms)", MintTokenResponseSchema), ...common, "503": error("FLUX_TOKEN_SECRETS is not configured") },
        },
      },
      "/v1/openapi.json": { get: { summary: "This document", security: [], responses: { "200": { description: "OpenAPI 3.1" } } } },
  };
  const errorSchema = schemaOf(ErrorEnvelopeSchema, "output");
  return {
    openapi: "3.1.0",
    info: { title: "Flux on Workers", version: "1", description: "Fault-tolerant, exactly-once windowed aggregation over event streams." },
    security: [{ bearer: [] }],
    components: {
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "FLUX_API_TOKEN (every route outside /v1/admin), FLUX_ADMIN_TOKEN (every route), or a signed token from POST /v1/admin/tokens (its scope)",
        },
      },
      schemas: { Error: errorSchema, ...definitions },
    },
    paths,
  };
}
