/**
 * Clock ticks for idle partitions (see `shared/replica/clock-ticks.ts`): each monitor
 * tick writes one tick into the log of every partition of a dataflow with
 * `idleAdvanceMs`, through the same `write` to the primary as a client batch, so
 * both replicas apply it at the same LSN. A partition that is failing over simply misses
 * this tick; the next one carries a later time.
 */
import { TICK_PRODUCER, TICK_RECORDS } from "../replica/clock-ticks.ts";
import { sendAlone, writePartition } from "../router/write-partition.ts";
/**
 * Sends `nowMs` as a tick to every available partition (healthy, degraded or being
 * recovered: client writes go on then too) whose routed replicas all
 * `answered` this tick's probes (a hung one would hold the monitor for a call timeout);
 * failures are left for the next tick.
 */
export async function sendClockTicks(port, record, nowMs, answered) {
    if (record.spec.idleAdvanceMs === undefined)
        return;
    const tick = { producer: TICK_PRODUCER, seq: Math.max(1, Math.floor(nowMs)), records: TICK_RECORDS };
    await Promise.all(record.routes
        .filter((route) => route.status !== "unavailable" && answered(route.primary) && (route.standby === null || answered(route.standby)))
        .map((route) => writePartition(sendAlone(port), route, tick).catch(() => undefined)));
}
