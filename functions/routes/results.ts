/** `GET /v1/dataflows/{id}/results?key=&from=&to=&limit=&after=`: per-key window aggregates, merged across partitions, in pages. */
import { Hono } from "hono";
import { zValidator } from "@hono/zod-validator";
import { z } from "zod";
import { FluxError } from "../../shared/errors.ts";
import { readResults } from "../../shared/router/read-results.ts";
import { NameSchema } from "../../shared/wire/dataflow-spec.ts";
import type { AppEnv } from "../app-env.ts";
import { withDeadline } from "../../durable-objects/replica-client.ts";
import { askCoordinator } from "../cluster.ts";
import { onInvalid } from "../http-errors.ts";

const epochMs = z
  .string()
  .regex(/^-?\d{1,16}$/, "must be epoch milliseconds")
  .transform(Number);

/** A page cursor: `<window start ms>:<key>`, as returned in `next`. */
const CursorSchema = z
  .string()
  .regex(/^-?\d{1,16}:/, "a cursor from a previous page's `next`")
  .transform((cursor) => {
    const at = cursor.indexOf(":");
    return { windowStartMs: Number(cursor.slice(0, at)), key: cursor.slice(at + 1) };
  });

/** Most results one page may hold, and how many a page holds when `limit` is not given. */
const MAX_PAGE = 10_000;
const DEFAULT_PAGE = 1_000;

const ResultsQuerySchema = z.strictObject({
  key: z.string().min(1).max(65_536).optional(),
  from: epochMs.optional(),
  to: epochMs.optional(),
  limit: z
    .string()
    .regex(/^[1-9][0-9]{0,4}$/, "a positive integer")
    .transform(Number)
    .refine((n) => n <= MAX_PAGE, `at most ${MAX_PAGE}`)
    .optional(),
  after: CursorSchema.optional(),
});

export const resultsRoutes = new Hono<AppEnv>().get(
  "/:id/results",
  zValidator("param", z.object({ id: NameSchema }), onInvalid),
  zValidator("query", ResultsQuerySchema, onInvalid),
  async (c) => {
    const { id } = c.req.valid("param");
    const { key, from, to, limit = DEFAULT_PAGE, after } = c.req.valid("query");
    const record = await askCoordinator(c.env, (co) => co.getDataflow(id));
    if (!record || record.deleting) throw new FluxError("UNKNOWN_DATAFLOW", `no dataflow '${id}'`);
    const timeoutMs = c.var.config.replicaTimeoutMs;
    const { results, next } = await readResults(
      (name, epoch, filter) => withDeadline((async () => c.env.PARTITION_REPLICA.getByName(name).readResults(epoch, filter))(), timeoutMs, `replica ${name}`),
      record,
      { key, fromMs: from, toMs: to, limit, after },
    );
    return c.json({ dataflow: id, results, next: next && `${next.windowStartMs}:${next.key}` });
  },
);
