/**
 * Tops up a healthy partition's standby from the primary's log and acknowledges it to
 * the primary (DESIGN.md §4, steps 2 and 3 done by the monitor). Routers normally do
 * this on every write; the monitor does it for what no later write will carry: entries
 * logged while the partition was degraded, and entries whose router died half-way.
 */
import type { ReplicaStatus } from "../wire/replica-rpc.ts";
import type { PartitionRoute } from "../wire/routing.ts";
import type { MonitorPort } from "./monitor-port.ts";

/** Log entries copied per call. */
const SYNC_PAGE = 200;

/** Brings the standby up to the primary's LSN as of the probe and makes it stable. */
export async function syncStandby(
  port: MonitorPort,
  route: PartitionRoute,
  primary: ReplicaStatus | null,
  standby: ReplicaStatus | null,
): Promise<void> {
  const attached = route.status === "recovering" && route.recovery?.phase === "attached";
  if ((route.status !== "healthy" && !attached) || !route.standby || !primary || !standby) return;
  if (primary.epoch !== route.epoch || standby.epoch !== route.epoch) return;
  let held = standby.lsn;
  while (held < primary.lsn) {
    const entries = await port.readLog(route.primary, route.epoch, held + 1, Math.min(primary.lsn, held + SYNC_PAGE));
    if (!Array.isArray(entries) || entries.length === 0) return;
    const reply = await port.replicate(route.standby, { epoch: route.epoch, entries, upToLsn: entries[entries.length - 1]?.lsn ?? held });
    if (reply.status !== "ok" && reply.status !== "gap") return;
    if (reply.lsn <= held) return;
    held = reply.lsn;
  }
  if (primary.appliedLsn < Math.min(held, primary.lsn)) await port.ackStandby(route.primary, { epoch: route.epoch, lsn: held });
}
