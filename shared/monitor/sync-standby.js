/** Asks the primary to forward what its standby lacks, when the probes show it lacks something. */
export async function syncStandby(port, route, primary, standby) {
    const attached = route.status === "recovering" && route.recovery?.phase === "attached";
    if ((route.status !== "healthy" && !attached) || !route.standby || !primary || !standby)
        return;
    if (primary.epoch !== route.epoch || standby.epoch !== route.epoch)
        return;
    const behind = standby.lsn < primary.lsn || primary.appliedLsn < primary.lsn || primary.standbyAckLsn < primary.lsn;
    if (behind)
        await port.flush(route.primary, route.epoch);
}
