/**
 * The health map without its volatile fields, as a comparable string: equal strings mean
 * storing the newer map would change nothing that a restarted monitor decides from
 * (its decisions use fresh probes of the same tick for LSNs).
 */
export function durableHealth(health) {
    const kept = Object.entries(health)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([name, h]) => [
        name,
        h.misses,
        h.lastMissAtMs,
        h.last && [h.last.dataflowId, h.last.partition, h.last.role, h.last.epoch, h.last.hasStandby, h.last.holdLogAfterLsn, h.last.configVersion],
    ]);
    return JSON.stringify(kept);
}
