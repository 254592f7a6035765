/** Worker entry: the Hono app plus the Durable Object classes `wrangler.toml` binds. */
import { createApp } from "./app.ts";

export { Coordinator } from "../durable-objects/coordinator.ts";
export { DataflowMonitor } from "../durable-objects/dataflow-monitor.ts";
export { StreamDirectory } from "../durable-objects/stream-directory.ts";
export { IngestStats } from "../durable-objects/ingest-stats.ts";
export { PartitionReplica } from "../durable-objects/partition-replica.ts";

export default createApp();
