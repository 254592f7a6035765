/** `GET /v1/dataflows/{id}/results?key=&from=&to=`: per-key window aggregates, merged across partitions. */
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

const ResultsQuerySchema = z.strictObject({
  key: z.string().min(1).max(65_536).optional(),
  from: epochMs.optional(),
  to: epochMs.optional(),
});

export const resultsRoutes = new Hono<AppEnv>().get(
  "/:id/results",
  zValidator("param", z.object({ id: NameSchema }), onInvalid),
  zValidator("query", ResultsQuerySchema, onInvalid),
  async (c) => {
    const { id } = c.req.valid("param");
    const { key, from, to } = c.req.valid("query");
    const record = await askCoordinator(c.env, (co) => co.getDataflow(id));
    if (!record) throw new FluxError("UNKNOWN_DATAFLOW", `no dataflow '${id}'`);
    const timeoutMs = c.var.config.replicaTimeoutMs;
    const results = await readResults(
      (name, epoch, filter) => withDeadline((async () => c.env.PARTITION_REPLICA.getByName(name).readResults(epoch, filter))(), timeoutMs, `replica ${name}`),
      record,
      { key, fromMs: from, toMs: to },
    );
    return c.json({ dataflow: id, results });
  },
);
