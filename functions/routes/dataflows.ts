/** `PUT /v1/dataflows/{id}`, `GET /v1/dataflows`, `GET /v1/dataflows/{id}`. */
import { Hono } from "hono";
import { zValidator } from "@hono/zod-validator";
import { z } from "zod";
import { FluxError } from "../../shared/errors.ts";
import { DataflowSpecSchema } from "../../shared/dataflow-checks/dataflow-spec-schema.ts";
import { inputOf, NameSchema } from "../../shared/wire/dataflow-spec.ts";
import { changedFields } from "../../shared/plan-dataflow.ts";
import type { DataflowRecord } from "../../shared/wire/routing.ts";
import { describeProblems } from "../../shared/wire/stream-schema.ts";
import type { DataflowView } from "../../shared/wire/api.ts";
import type { AppEnv } from "../app-env.ts";
import { askRegistry, findDataflow, listDataflows } from "../cluster.ts";
import { onInvalid } from "../http-errors.ts";
import { strictJsonBody } from "../json-body.ts";

const IdParamSchema = z.object({ id: NameSchema });

/** The public view of a dataflow. */
function describe(record: DataflowRecord): DataflowView {
  return {
    id: record.id,
    spec: record.spec,
    createdAt: new Date(record.createdAtMs).toISOString(),
    ready: record.ready,
    deleting: record.deleting,
    partitions: record.routes.map(({ partition, epoch, primary, standby, status }) => ({ partition, epoch, primary, standby, status })),
    readers: record.readers,
  };
}

export const dataflowRoutes = new Hono<AppEnv>()
  .put("/:id", zValidator("param", IdParamSchema, onInvalid), strictJsonBody, zValidator("json", DataflowSpecSchema, onInvalid), async (c) => {
    const { id } = c.req.valid("param");
    const spec = c.req.valid("json");
    const result = await askRegistry(c.env, async (registry) => registry.putDataflow(id, spec));
    if (result.status === "invalid") {
      const where = describeProblems(result.problems);
      const input = spec.from === undefined ? `the schema of ${inputOf(spec)}` : `its input, the results of ${inputOf(spec)}`;
      throw new FluxError("INVALID_REQUEST", `the spec does not fit ${input}: ${where}`, { issues: result.problems });
    }
    if (result.status === "deleting") {
      throw new FluxError("SPEC_CONFLICT", `dataflow '${id}' is being deleted; create it again once the DELETE has finished`);
    }
    if (result.status === "refused") {
      const { refusal } = result;
      throw new FluxError(refusal.code, refusal.refused, {
        changed: ["partitions"],
        existing: result.record.spec,
        moves: result.record.moves.length,
      });
    }
    if (result.status === "conflict") {
      const changed = changedFields(result.record.spec, spec);
      const why = changed.includes("partitions")
        ? "changing the partition count together with other fields is not supported (send the stored spec with only a higher `partitions` to grow it)"
        : "changing a dataflow is not supported yet";
      throw new FluxError("SPEC_CONFLICT", `dataflow '${id}' exists with a different ${changed.join(", ")}: ${why}; delete it first or use another id`, {
        changed,
        existing: result.record.spec,
      });
    }
    if (result.record.spec.stream !== undefined) c.var.routingCache.expire(result.record.spec.stream);
    const code = result.status === "created" ? 201 : result.status === "rescaling" ? 202 : 200;
    return c.json({ status: result.status, dataflow: describe(result.record), starts: result.starts, warnings: result.warnings }, code);
  })
  .delete("/:id", zValidator("param", IdParamSchema, onInvalid), async (c) => {
    const { id } = c.req.valid("param");
    const result = await askRegistry(c.env, async (registry) => registry.deleteDataflow(id));
    if (result.status === "not-found") throw new FluxError("UNKNOWN_DATAFLOW", `no dataflow '${id}'`);
    if (result.status === "in-use") {
      const names = result.readers.map((r) => `'${r}'`).join(", ");
      throw new FluxError("DATAFLOW_IN_USE", `dataflow '${id}' is read by ${names}: delete ${result.readers.length === 1 ? "that stage" : "those stages"} first`, { readers: result.readers });
    }
    if (result.stream !== null) c.var.routingCache.expire(result.stream);
    // 202 while some replica has not yet dropped its state; the monitor keeps retrying it.
    return c.json({ dataflow: id, status: result.status, pending: result.pending }, result.status === "deleted" ? 200 : 202);
  })
  .get("/", async (c) => {
    const views = await listDataflows(c.env, c.var.config);
    return c.json({ dataflows: views.map(({ record }) => describe(record)) });
  })
  .get("/:id", zValidator("param", IdParamSchema, onInvalid), async (c) => {
    const { id } = c.req.valid("param");
    const record = await findDataflow(c.env, c.var.config, id);
    if (!record) throw new FluxError("UNKNOWN_DATAFLOW", `no dataflow '${id}'`);
    return c.json({ dataflow: describe(record) });
  });
