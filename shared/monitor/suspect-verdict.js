/**
 * The verdict on `replica` reported at `reportedAtMs`, or null while there is none yet.
 * @param healthOf the monitor's latest health for a dataflow.
 */
export function suspectVerdict(records, healthOf, replica, reportedAtMs) {
    const record = records.find((r) => !r.deleting && r.routes.some((route) => [route.primary, route.standby, route.recovery?.replica].includes(replica)));
    if (!record)
        return "replaced";
    const seen = healthOf(record.id)[replica];
    return seen && seen.misses === 0 && seen.lastOkAtMs !== null && seen.lastOkAtMs >= reportedAtMs ? "answering" : null;
}
