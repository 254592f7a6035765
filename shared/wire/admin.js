/** Admin (chaos) request shapes: injected replica faults for tests and demos (issue 3). */
import { z } from "zod";
/** `crash`: down until healed; `hang`: calls never answer; `slow`: calls take 2 s; `wipe`: storage lost; `heal`: back to normal. */
export const FaultRequestSchema = z.strictObject({
    kind: z.enum(["crash", "hang", "slow", "wipe", "heal"]),
});
/** A replica name as `replicaName` builds it: `{dataflow}/p{partition}/g{generation}`. */
export const ReplicaNameSchema = z
    .string()
    .max(100)
    .regex(/^(?!__)[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}\/p\d{1,2}\/g\d{1,15}$/, "a replica name such as clicks/p0/g1");
/** How long each call to a `slow` replica is delayed, ms. */
export const SLOW_FAULT_DELAY_MS = 2000;
/**
 * `GET /v1/admin/counters`: what one isolate counted since it started (issue 12). Calls are
 * Durable Object RPC calls made from this isolate, by method; rows are SQLite rows (a
 * key-value key counts as one row); Worker requests are requests the app served.
 */
export const CountersSchema = z.object({
    calls: z.record(z.string(), z.number().int()),
    callsTotal: z.number().int(),
    rowsRead: z.number().int(),
    rowsWritten: z.number().int(),
    workerRequests: z.number().int(),
});
