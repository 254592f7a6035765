/** `PUT /v1/streams/{stream}` (declare a schema), `GET /v1/streams`, `GET /v1/streams/{stream}`. */
import { Hono } from "hono";
import { zValidator } from "@hono/zod-validator";
import { z } from "zod";
import { FluxError } from "../../shared/errors.ts";
import { NameSchema } from "../../shared/wire/dataflow-spec.ts";
import { describeProblems, StreamSchemaSchema } from "../../shared/wire/stream-schema.ts";
import type { StreamConflict } from "../../durable-objects/stream-store.ts";
import type { AppEnv } from "../app-env.ts";
import { askRegistry } from "../cluster.ts";
import { onInvalid } from "../http-errors.ts";
import { strictJsonBody } from "../json-body.ts";

/** Most misfitting dataflows spelled out in the message (`details.dataflows` lists them all). */
const NAMED_IN_MESSAGE = 5;

/** The 409 for a schema that dataflows reading the stream would not fit: the first one's problems in the message, every one in the details. */
function conflictError(stream: string, conflicts: StreamConflict[]): FluxError {
  const [first, ...others] = conflicts as [StreamConflict, ...StreamConflict[]];
  const more = others.slice(0, NAMED_IN_MESSAGE - 1).map((c) => `'${c.dataflow}'`);
  const unnamed = others.length - more.length;
  const also = others.length === 0 ? "" : `; so would ${more.join(", ")}${unnamed > 0 ? ` and ${unnamed} more` : ""} (details.dataflows)`;
  return new FluxError("SPEC_CONFLICT", `dataflow '${first.dataflow}' reads stream '${stream}' and would not fit this schema: ${describeProblems(first.problems)}${also}`, {
    dataflow: first.dataflow,
    issues: first.problems,
    dataflows: conflicts.map((c) => ({ dataflow: c.dataflow, issues: c.problems })),
  });
}

const StreamParamSchema = z.object({ stream: NameSchema });

export const streamRoutes = new Hono<AppEnv>()
  .put("/:stream", zValidator("param", StreamParamSchema, onInvalid), strictJsonBody, zValidator("json", StreamSchemaSchema, onInvalid), async (c) => {
    const { stream } = c.req.valid("param");
    const schema = c.req.valid("json");
    const result = await askRegistry(c.env, async (registry) => registry.putStream(stream, schema));
    if (result.status === "conflict") throw conflictError(stream, result.conflicts);
    // Routers pick the new schema up when their cached routing expires (FLUX_ROUTING_CACHE_MS); this one at once.
    c.var.routingCache.expire(stream);
    return c.json({ status: result.status, stream: result.stream }, result.status === "created" ? 201 : 200);
  })
  .get("/", async (c) => c.json({ streams: await askRegistry(c.env, async (registry) => registry.listStreams()) }))
  .get("/:stream", zValidator("param", StreamParamSchema, onInvalid), async (c) => {
    const { stream } = c.req.valid("param");
    const record = await askRegistry(c.env, async (registry) => registry.getStream(stream));
    if (!record) throw new FluxError("UNKNOWN_STREAM", `stream '${stream}' has no declared schema`);
    return c.json({ stream: record });
  });
