/**
 * The one way Workers and Durable Objects call Durable Objects (issue 12, STYLE.md §3):
 * stubs whose every method call is counted, and a deadline after which a call rejects
 * exactly like one that failed (`deadline-timer.ts`, the one deadline mechanism). Both `functions/` and `durable-objects/` import this.
 */
import type { LocationHint } from "../shared/config.ts";
import { COORDINATOR_NAME, directoryName, INGEST_STATS_NAME, monitorName } from "../shared/names.ts";
import { countCall } from "./counters.ts";
import { DeadlineTimer } from "./deadline-timer.ts";

/**
 * Runs `call` and rejects when it has not settled within `ms`, on `timer` (calls that
 * overlap share its one armed timer) or, by default, on a timer of its own that is cleared
 * once the call settles. `call` is an async function so that a stub's union of promise
 * types settles into one promise of a union.
 */
export function withDeadline<T>(call: () => Promise<T>, ms: number, what: string, timer = new DeadlineTimer(undefined, { clearWhenIdle: true })): Promise<T> {
  return timer.race(call(), ms, what);
}

/**
 * Wraps a stub so each method call counts as one call of that method. `then` is left
 * alone so that a stub returned from an async function is not taken for a promise. Each
 * method is wrapped once per stub (hot-path ports reuse their stubs).
 */
function counted<S extends object>(stub: S): S {
  const methods = new Map<string, unknown>();
  return new Proxy(stub, {
    get(target, prop) {
      if (typeof prop !== "string" || prop === "then") return Reflect.get(target, prop);
      const known = methods.get(prop);
      if (known) return known;
      const value: unknown = Reflect.get(target, prop);
      if (typeof value !== "function") return value;
      const method = (...args: unknown[]) => {
        countCall(prop);
        return Reflect.apply(value, target, args);
      };
      methods.set(prop, method);
      return method;
    },
  });
}

/** A counted stub of the replica `name`; the hint places it when this call creates it. */
export function replicaStub(env: Env, name: string, hint?: string | null) {
  return counted(env.PARTITION_REPLICA.getByName(name, hint ? { locationHint: hint as LocationHint } : undefined));
}

/** A counted stub of the registry (the object named "coordinator": issue 29). */
export function coordinatorStub(env: Env) {
  return counted(env.COORDINATOR.getByName(COORDINATOR_NAME));
}

/** A counted stub of dataflow `id`'s monitor (issue 29). */
export function monitorStub(env: Env, id: string) {
  return counted(env.DATAFLOW_MONITOR.getByName(monitorName(id)));
}

/** A counted stub of stream `stream`'s routing directory (issue 29). */
export function directoryStub(env: Env, stream: string) {
  return counted(env.STREAM_DIRECTORY.getByName(directoryName(stream)));
}

/** A counted stub of the refused-batch counter. */
export function ingestStatsStub(env: Env) {
  return counted(env.INGEST_STATS.getByName(INGEST_STATS_NAME));
}
