/** `GET /v1/dataflows/{id}/results?key=&from=&to=&limit=&after=`: per-key window aggregates, merged across partitions, in pages. */
import { Hono } from "hono";
import { zValidator } from "@hono/zod-validator";
import { z } from "zod";
import { readResults } from "../../shared/router/read-results.ts";
import { NameSchema } from "../../shared/wire/dataflow-spec.ts";
import { DEFAULT_PAGE, ResultsQuerySchema } from "../../shared/wire/results-query.ts";
import type { ResultsResponse } from "../../shared/wire/api.ts";
import type { DataflowRecord } from "../../shared/wire/routing.ts";
import type { AppEnv } from "../app-env.ts";
import { replicaStub, withDeadline } from "../../platform/object-calls.ts";
import { keepRunning, readableDataflow, reportFailure } from "../cluster.ts";
import { FluxError } from "../../shared/errors.ts";
import { onInvalid } from "../http-errors.ts";

export const resultsRoutes = new Hono<AppEnv>().get(
  "/:id/results",
  zValidator("param", z.object({ id: NameSchema }), onInvalid),
  zValidator("query", ResultsQuerySchema, onInvalid),
  async (c) => {
    const { id } = c.req.valid("param");
    const { key, from, to, limit = DEFAULT_PAGE, after } = c.req.valid("query");
    const { config, dataflowCache } = c.var;
    const read = (record: DataflowRecord) =>
      readResults(
        (name, epoch, filter) => withDeadline(async () => replicaStub(c.env, name).readResults(epoch, filter), config.replicaTimeoutMs, `replica ${name}`),
        record,
        { key, fromMs: from, toMs: to, limit, after },
      );
    // A primary that did not answer is reported to the dataflow's monitor, which probes at once (issue 29).
    const reported = (err: unknown) => {
      const replica = err instanceof FluxError ? err.replica : undefined;
      if (replica !== undefined) reportFailure(c.env, keepRunning(c), [id], replica);
      return err;
    };
    const found = await readableDataflow(c.env, config, dataflowCache, id);
    // A cached record may name a primary replaced since (issue 29): once more with a fresh one.
    const { results, next } = await read(found.record).catch(async (err: unknown) => {
      if (!found.cached) throw reported(err);
      return read((await readableDataflow(c.env, config, dataflowCache, id, true)).record).catch((again: unknown) => {
        throw reported(again);
      });
    });
    const body: ResultsResponse = { dataflow: id, results, next: next && `${next.windowStartMs}:${next.key}` };
    return c.json(body);
  },
);
