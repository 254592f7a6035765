/**
 * The product's Worker, unchanged, with every public entry point of its Durable Objects
 * (RPC methods, fetch, alarm) traced: each one records which object ran it and when.
 * `GET /bench/activity` returns `{ "<class> <object id>": { calls: {method: n}, atMs: [...] } }`.
 * Bench only (bench/idle.mjs counts object-seconds from it, bench/control-plane.mjs calls per
 * object per second); never deployed.
 */
import app from "../../functions/index.ts";
import { Coordinator, DataflowMonitor, IngestStats, PartitionReplica, StreamDirectory } from "../../functions/index.ts";

interface ObjectActivity {
  calls: Record<string, number>;
  atMs: number[];
}
const activity: Record<string, ObjectActivity> = {};

function record(kind: string, id: DurableObjectId, method: string): void {
  const entry = (activity[`${kind} ${id.toString()}`] ??= { calls: {}, atMs: [] });
  entry.calls[method] = (entry.calls[method] ?? 0) + 1;
  entry.atMs.push(Date.now());
}

/** Traced methods running synchronously now: a method called by another of its object before that one's first await is not a call the object received. */
let depth = 0;

/** Shadows each method of `base` on `traced` with one that records the call first (not one made from within). */
function trace(traced: object, base: object, kind: string): void {
  for (const method of Object.getOwnPropertyNames(base)) {
    const original: unknown = Object.getOwnPropertyDescriptor(base, method)?.value;
    if (method === "constructor" || typeof original !== "function") continue;
    Object.defineProperty(traced, method, {
      configurable: true,
      writable: true,
      value(this: { ctx: DurableObjectState }, ...args: unknown[]): unknown {
        if (depth === 0) record(kind, this.ctx.id, method);
        depth += 1;
        try {
          return (original as (...a: unknown[]) => unknown).apply(this, args);
        } finally {
          depth -= 1;
        }
      },
    });
  }
}

class TracedPartitionReplica extends PartitionReplica {}
class TracedCoordinator extends Coordinator {}
class TracedIngestStats extends IngestStats {}
class TracedDataflowMonitor extends DataflowMonitor {}
class TracedStreamDirectory extends StreamDirectory {}
trace(TracedPartitionReplica.prototype, PartitionReplica.prototype, "replica");
trace(TracedCoordinator.prototype, Coordinator.prototype, "coordinator");
trace(TracedIngestStats.prototype, IngestStats.prototype, "ingest-stats");
trace(TracedDataflowMonitor.prototype, DataflowMonitor.prototype, "monitor");
trace(TracedStreamDirectory.prototype, StreamDirectory.prototype, "directory");

export {
  TracedCoordinator as Coordinator,
  TracedDataflowMonitor as DataflowMonitor,
  TracedIngestStats as IngestStats,
  TracedPartitionReplica as PartitionReplica,
  TracedStreamDirectory as StreamDirectory,
};

export default {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response> {
    if (new URL(request.url).pathname === "/bench/activity") return Response.json(activity);
    return app.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<Env>;
