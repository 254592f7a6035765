/**
 * `POST /v1/admin/replicas/{name}/fault` (issue 3): injects a fault into one replica for
 * tests and demos. Exists only when FLUX_ENABLE_FAULTS is "true" (404 otherwise, checked
 * in app.ts before any token) and needs admin access. Replica names contain "/": URL-encode them.
 * `GET /v1/admin/counters` (issue 12): this isolate's call and row counters, same rules.
 */
import { Hono } from "hono";
import { zValidator } from "@hono/zod-validator";
import { z } from "zod";
import { FluxError } from "../../shared/errors.ts";
import { FaultRequestSchema, ReplicaNameSchema } from "../../shared/wire/admin.ts";
import type { PartitionReplica } from "../../durable-objects/partition-replica.ts";
import type { AppEnv } from "../app-env.ts";
import { findDataflow } from "../cluster.ts";
import { dataflowOfReplica } from "../../shared/names.ts";
import { onInvalid } from "../http-errors.ts";
import { replicaStub } from "../../platform/object-calls.ts";
import { readCounters } from "../../platform/counters.ts";
import { strictJsonBody } from "../json-body.ts";

const ReplicaParamSchema = z.object({ name: ReplicaNameSchema });

export const adminRoutes = new Hono<AppEnv>()
  .post("/replicas/:name/fault", zValidator("param", ReplicaParamSchema, onInvalid), strictJsonBody, zValidator("json", FaultRequestSchema, onInvalid), async (c) => {
    const { name } = c.req.valid("param");
    const { kind } = c.req.valid("json");
    const record = await findDataflow(c.env, c.var.config, dataflowOfReplica(name));
    const known = record?.routes.some((route) => [route.primary, route.standby, route.recovery?.replica, ...route.retired].includes(name)) ?? false;
    if (!known) throw new FluxError("NOT_FOUND", `no replica '${name}' in any dataflow's routing`);
    let reply: Awaited<ReturnType<DurableObjectStub<PartitionReplica>["injectFault"]>>;
    try {
      reply = await replicaStub(c.env, name).injectFault(kind);
    } catch (err) {
      throw new FluxError("UNAVAILABLE", `replica ${name} did not answer, so the fault was not injected (it may already be crashed or hung); retry, or heal it`, {
        reason: err instanceof Error ? err.message : String(err),
      });
    }
    if (reply.status !== "ok") throw new FluxError("NOT_FOUND", "fault injection is disabled in the replicas' configuration");
    return c.json({ replica: name, fault: reply.fault, injected: kind });
  })
  // Per isolate: locally one workerd isolate runs the Worker and every object, so this is everything.
  .get("/counters", (c) => c.json(readCounters()));
