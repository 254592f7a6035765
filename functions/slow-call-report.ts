/**
 * Reports a replica call that is still unanswered after `FLUX_SUSPECT_MS` while the
 * router keeps waiting for it (issue 12, deliverable 5): the monitor probes at once with
 * its own deadline, so a hung or slowed replica is failed over without waiting for the
 * router's longer call timeout first. A call that merely runs slow costs one extra probe.
 */
import type { ReplicaPort } from "../shared/router/write-partition.ts";

/**
 * Wraps `port` so that each call to a replica unanswered after `suspectMs` calls
 * `onSuspect(name)`, at most once per replica for the life of the wrapper (one request).
 */
export function reportingSlowCalls(port: ReplicaPort, suspectMs: number, onSuspect: (replica: string) => void): ReplicaPort {
  const reported = new Set<string>();
  const watch = <T>(name: string, call: Promise<T>): Promise<T> => {
    if (reported.has(name)) return call;
    const timer = setTimeout(() => {
      if (reported.has(name)) return;
      reported.add(name);
      onSuspect(name);
    }, suspectMs);
    return call.finally(() => clearTimeout(timer));
  };
  return {
    applyBatch: (name, msg) => watch(name, port.applyBatch(name, msg)),
    replicate: (name, msg) => watch(name, port.replicate(name, msg)),
    ackStandby: (name, msg) => watch(name, port.ackStandby(name, msg)),
    readLog: (name, epoch, from, to) => watch(name, port.readLog(name, epoch, from, to)),
  };
}
