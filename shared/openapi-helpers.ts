/**
 * Building blocks of the OpenAPI document (`openapi.ts`): JSON Schema from zod with
 * readable component names, parameters from zod objects, and the error responses.
 */
import { z } from "zod";

/** A JSON Schema object. */
export type JsonSchema = Record<string, unknown>;

/**
 * Schema helpers writing into `definitions`: JSON Schema 2020-12 (OpenAPI 3.1's dialect)
 * of what a client sends (`input`) or receives (`output`). Local `$defs` (recursive
 * schemas: filters) move into `definitions`, for `components.schemas`, since `#` in an
 * OpenAPI document means the document itself.
 */
export function schemaHelpers(definitions: Record<string, JsonSchema>) {
  const schemaOf = (schema: z.ZodType, io: "input" | "output"): JsonSchema => {
    const { $schema: _dialect, $defs, ...rest } = z.toJSONSchema(schema, { io, target: "draft-2020-12", unrepresentable: "any" });
    // Named schemas (`.meta({ id })`) keep their name; the output form gets a suffix if it differs.
    const names = new Map<string, string>();
    for (const [name, def] of Object.entries($defs ?? {})) {
      const taken = definitions[name];
      names.set(name, taken === undefined || JSON.stringify(taken) === JSON.stringify(def) ? name : `${name}${io === "input" ? "Input" : "Output"}`);
    }
    const rename = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(rename);
      if (value === null || typeof value !== "object") return value;
      return Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, k === "$ref" && typeof v === "string" ? v.replace(/^#\/\$defs\/(.+)$/, (_m, name: string) => `#/components/schemas/${names.get(name) ?? name}`) : rename(v)]),
      );
    };
    for (const [name, def] of Object.entries($defs ?? {})) definitions[names.get(name) ?? name] = rename(def) as JsonSchema;
    return rename(rest) as JsonSchema;
  };
  const json = (schema: z.ZodType, io: "input" | "output") => ({ "application/json": { schema: schemaOf(schema, io) } });
  const ok = (description: string, schema: z.ZodType) => ({ description, content: json(schema, "output") });
  // Parameters from a zod object: one per property, required unless optional.
  const parametersOf = (schema: z.ZodObject, where: "query" | "header" | "path") => {
    const described = schemaOf(schema, "input");
    const properties = (described.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((described.required ?? []) as string[]);
    return Object.entries(properties).map(([name, s]) => ({ name, in: where, required: where === "path" || required.has(name), schema: s }));
  };
  return { schemaOf, json, ok, parametersOf };
}

/** Headers that come with some error statuses (`errorResponse` in functions/http-errors.ts). */
const ERROR_HEADERS: Partial<Record<string, Record<string, { description: string; schema: JsonSchema }>>> = {
  "401": { "WWW-Authenticate": { description: 'always `Bearer realm="flux"`', schema: { type: "string" } } },
  "503": { "Retry-After": { description: "seconds to wait before resending with the same seq (`1`); only with UNAVAILABLE and BACKPRESSURE", schema: { type: "string" } } },
};

const error = (status: string, description: string) => ({
  description,
  ...(ERROR_HEADERS[status] ? { headers: ERROR_HEADERS[status] } : {}),
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
});

/** Every status a route may answer with the error envelope, and what it means there. */
const ERRORS = {
  "400": "invalid request (INVALID_REQUEST, INVALID_JSON, INVALID_EVENT)",
  "401": "missing, wrong, expired, tampered or revoked token (details.reason says which, for a signed token)",
  "403": "the token does not allow this request (its scope or resources)",
  "404": "not found",
  "409": "conflict",
  "413": "request body over FLUX_MAX_BODY_BYTES (or, for events, too many events)",
  "415": "the body is not application/json",
  "500": "internal error (a bug), or invalid configuration",
  "503": "unavailable, or a stage reading the dataflow too far behind (BACKPRESSURE; retry later; Retry-After), or not configured",
} as const;
type ErrorStatus = keyof typeof ERRORS;

/**
 * Error responses: the ones every authenticated route can give (400 for a query parameter
 * it does not take, a stray `access_token` or a WebSocket upgrade; 401; 403; 413 for a body
 * over the limit, whatever the method; 500; 503), plus `more`, with optional descriptions.
 */
export function errors(more: readonly ErrorStatus[], descriptions: Partial<Record<ErrorStatus, string>> = {}) {
  const statuses = new Set<ErrorStatus>(["400", "401", "403", "413", "500", "503", ...more]);
  return Object.fromEntries([...statuses].sort().map((status) => [status, error(status, descriptions[status] ?? ERRORS[status])]));
}

/** Routes that read a JSON body also answer 413 and 415. */
export const WITH_BODY = ["413", "415"] as const;
