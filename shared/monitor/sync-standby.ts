/**
 * Makes sure a partition's standby holds everything its primary logged (DESIGN.md §4).
 * Primaries forward every write themselves; the monitor covers what no later write will
 * carry: entries whose forward failed while their writer gave up, and, once a recovered
 * standby is attached, what the primary logged alone before. One `flush` call does it.
 */
import type { ReplicaStatus } from "../wire/replica-rpc.ts";
import type { PartitionRoute } from "../wire/routing.ts";
import type { MonitorPort } from "./monitor-port.ts";

/** Asks the primary to forward what its standby lacks, when the probes show it lacks something. */
export async function syncStandby(
  port: MonitorPort,
  route: PartitionRoute,
  primary: ReplicaStatus | null,
  standby: ReplicaStatus | null,
): Promise<void> {
  const attached = route.status === "recovering" && route.recovery?.phase === "attached";
  if ((route.status !== "healthy" && !attached) || !route.standby || !primary || !standby) return;
  if (primary.epoch !== route.epoch || standby.epoch !== route.epoch) return;
  const behind = standby.lsn < primary.lsn || primary.appliedLsn < primary.lsn || primary.standbyAckLsn < primary.lsn;
  if (behind) await port.flush(route.primary, route.epoch);
}
