/**
 * Per-isolate cost counters (issue 12): Durable Object calls by method, SQLite rows read
 * and written, Worker requests. Module-level on purpose: they count whatever runs in this
 * isolate (locally one workerd isolate holds the Worker and every object, so they count
 * everything; on the platform each isolate counts only its own share). Never persisted.
 */
import type { Counters } from "../shared/wire/admin.ts";

const calls = new Map<string, number>();
let rowsRead = 0;
let rowsWritten = 0;
let workerRequests = 0;

/** Counts one call to a Durable Object method (each RPC call is a billed request). */
export function countCall(method: string): void {
  calls.set(method, (calls.get(method) ?? 0) + 1);
}

/** Adds the rows a consumed SQLite cursor (or a key-value operation) read and wrote. */
export function countRows(read: number, written: number): void {
  rowsRead += read;
  rowsWritten += written;
}

/** Counts one request the Worker's app served. */
export function countWorkerRequest(): void {
  workerRequests += 1;
}

/** The counters as they are now, since the isolate started. */
export function readCounters(): Counters {
  const byMethod = Object.fromEntries([...calls].sort(([a], [b]) => a.localeCompare(b)));
  const callsTotal = [...calls.values()].reduce((sum, n) => sum + n, 0);
  return { calls: byMethod, callsTotal, rowsRead, rowsWritten, workerRequests };
}
