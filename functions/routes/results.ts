/** `GET /v1/dataflows/{id}/results?key=&from=&to=&limit=&after=`: per-key window aggregates, merged across partitions, in pages. */
import { Hono } from "hono";
import { zValidator } from "@hono/zod-validator";
import { z } from "zod";
import { readResults } from "../../shared/router/read-results.ts";
import { NameSchema } from "../../shared/wire/dataflow-spec.ts";
import { DEFAULT_PAGE, ResultsQuerySchema } from "../../shared/wire/results-query.ts";
import type { ResultsResponse } from "../../shared/wire/api.ts";
import type { AppEnv } from "../app-env.ts";
import { replicaStub, withDeadline } from "../../platform/object-calls.ts";
import { readableDataflow } from "../cluster.ts";
import { onInvalid } from "../http-errors.ts";

export const resultsRoutes = new Hono<AppEnv>().get(
  "/:id/results",
  zValidator("param", z.object({ id: NameSchema }), onInvalid),
  zValidator("query", ResultsQuerySchema, onInvalid),
  async (c) => {
    const { id } = c.req.valid("param");
    const { key, from, to, limit = DEFAULT_PAGE, after } = c.req.valid("query");
    const record = await readableDataflow(c.env, id);
    const timeoutMs = c.var.config.replicaTimeoutMs;
    const { results, next } = await readResults(
      (name, epoch, filter) => withDeadline(async () => replicaStub(c.env, name).readResults(epoch, filter), timeoutMs, `replica ${name}`),
      record,
      { key, fromMs: from, toMs: to, limit, after },
    );
    const body: ResultsResponse = { dataflow: id, results, next: next && `${next.windowStartMs}:${next.key}` };
    return c.json(body);
  },
);
