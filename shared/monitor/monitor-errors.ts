/**
 * Telling "a replica did not answer" from a bug (issue 10). Every call the monitor makes
 * through its port is marked: a rejection becomes a {@link ReplicaCallFailed}, expected
 * and retried next tick. Any other error thrown during a tick is unexpected: it is
 * reported to the caller's log with its context and kept as a `monitor-error` event, so
 * it shows in `GET /v1/status`, instead of being swallowed like a failed call.
 */
import type { DataflowRecord } from "../wire/routing.ts";
import { MAX_EVENTS } from "../wire/routing.ts";

/** A replica call that failed or missed its deadline. */
class ReplicaCallFailed extends Error {
  override readonly name = "ReplicaCallFailed";

  constructor(method: string, cause: unknown) {
    super(`${method}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** Where the monitor reports unexpected errors (shared code has no console: the caller logs). */
export interface MonitorLog {
  error(context: string, err: unknown): void;
}

/** The same port, with every rejection of its calls marked as a {@link ReplicaCallFailed}. */
export function markCallFailures<P extends object>(port: P): P {
  return new Proxy(port, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key);
      if (typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        try {
          const result: unknown = await value.apply(target, args);
          return result;
        } catch (err) {
          throw err instanceof ReplicaCallFailed ? err : new ReplicaCallFailed(String(key), err);
        }
      };
    },
  });
}

/**
 * A handler for errors caught during one dataflow's tick: failed calls are ignored (the
 * next tick retries), anything else is logged and recorded in the dataflow's events.
 * @returns `report`, and `takeUnsaved` telling whether it recorded an event since last asked.
 */
export function tickErrors(log: MonitorLog, record: DataflowRecord, nowMs: number) {
  let unsaved = false;
  const report = (partition: number, context: string, err: unknown): void => {
    if (err instanceof ReplicaCallFailed) return;
    const where = `dataflow ${record.id} partition ${partition}: ${context}`;
    log.error(where, err);
    const detail = `${context}: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`;
    const last = [...record.events].reverse().find((e) => e.kind === "monitor-error" && e.partition === partition);
    // The same error every tick updates its time instead of pushing fail-overs out of the list.
    if (last && last.detail === detail) last.atMs = nowMs;
    else record.events.push({ atMs: nowMs, partition, kind: "monitor-error", detail });
    if (record.events.length > MAX_EVENTS) record.events.splice(0, record.events.length - MAX_EVENTS);
    unsaved = true;
  };
  return {
    report,
    /** Whether an error was recorded since the last call. */
    takeUnsaved: (): boolean => {
      const was = unsaved;
      unsaved = false;
      return was;
    },
  };
}
