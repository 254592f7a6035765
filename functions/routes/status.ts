/** `GET /v1/status`: every dataflow's partitions with their replicas' roles, epochs and LSNs. */
import { Hono } from "hono";
import type { AppEnv } from "../app-env.ts";
import { coordinator } from "../cluster.ts";

export const statusRoutes = new Hono<AppEnv>().get("/", async (c) => {
  const records = await coordinator(c.env).listDataflows();
  const replicaStatus = async (name: string) => {
    try {
      return (await c.env.PARTITION_REPLICA.getByName(name).status()) ?? { name, error: "not initialised" };
    } catch (err) {
      return { name, error: `unreachable: ${err instanceof Error ? err.message : String(err)}` };
    }
  };
  const dataflows = await Promise.all(
    records.map(async (record) => ({
      id: record.id,
      stream: record.spec.stream,
      ready: record.ready,
      partitions: await Promise.all(
        record.routes.map(async (route) => ({
          partition: route.partition,
          epoch: route.epoch,
          status: route.status,
          version: route.version,
          replicas: await Promise.all([route.primary, ...(route.standby ? [route.standby] : [])].map(replicaStatus)),
        })),
      ),
    })),
  );
  return c.json({ dataflows });
});
