/**
 * Reports a replica call that is still unanswered after `FLUX_SUSPECT_MS` while the
 * router keeps waiting for it (issue 12, deliverable 5). The monitor probes at once with
 * its own deadline and answers with a verdict: if it has replaced the replica meanwhile,
 * the call is abandoned (it fails like a timeout, so the client's retry finds the new
 * routing); if the replica answered a probe, it is merely busy and the call goes on.
 */
import type { DeadlineTimer } from "../platform/deadline-timer.ts";
import type { ReplicaPort } from "../shared/router/write-partition.ts";
import type { SuspectVerdict } from "../shared/wire/routing.ts";

/**
 * Wraps `port` so that a call to a replica unanswered after `suspectMs` asks
 * `onSuspect(name)` for a verdict, once per replica for the life of the wrapper (one
 * request); every pending call to a replica the verdict says was replaced is abandoned.
 * The watches run on `timer` (the request's, shared with the calls' deadlines).
 */
export function reportingSlowCalls(port: ReplicaPort, suspectMs: number, onSuspect: (replica: string) => Promise<SuspectVerdict>, timer: DeadlineTimer): ReplicaPort {
  const replaced = new Map<string, Promise<never>>();
  const verdictOn = (name: string): Promise<never> => {
    let verdict = replaced.get(name);
    if (!verdict) {
      verdict = onSuspect(name).then((v) => (v === "replaced" ? Promise.reject(new Error(`replica ${name} was failed over while this call waited`)) : new Promise<never>(() => {})));
      // The verdict may come after the call settled; nobody else awaits it then.
      verdict.catch(() => undefined);
      replaced.set(name, verdict);
    }
    return verdict;
  };
  const watch = <T>(name: string, call: Promise<T>): Promise<T> => timer.watch(call, suspectMs, (reject) => void verdictOn(name).catch(reject));
  return {
    write: (name, msg) => watch(name, port.write(name, msg)),
  };
}
