/** How many of a dataflow's latest events the summary lists. */
const SUMMARY_EVENTS = 5;
function replicaLine(replica) {
    if (replica.error !== undefined)
        return `${replica.name} ERROR ${replica.error}`;
    const lag = replica.lag ? `, lag ${replica.lag}` : "";
    const late = replica.lateRecords ? `, late ${replica.lateRecords}` : "";
    return `${replica.role ?? "?"} ${replica.name} lsn ${replica.lsn ?? "?"} (applied ${replica.appliedLsn ?? "?"}${lag}${late})`;
}
/**
 * One line per partition, e.g. `p0 healthy epoch 3: primary df/p0/g1 lsn 12 (applied 12);
 * standby df/p0/g2 lsn 12 (applied 12)`, `at kind p<partition>: detail` per event, and
 * `at stream code ×count` per row of refused ingest requests.
 */
export function summarizeStatus(status) {
    return {
        dataflows: status.dataflows.map((dataflow) => ({
            id: dataflow.id,
            stream: dataflow.stream,
            partitions: dataflow.partitions.map((p) => {
                const recovery = p.recovery ? ` [recovering ${p.recovery.replica}: ${p.recovery.phase}]` : "";
                return `p${p.partition} ${p.status} epoch ${p.epoch}${recovery}: ${p.replicas.map(replicaLine).join("; ")}`;
            }),
            events: dataflow.events.slice(-SUMMARY_EVENTS).map((e) => `${e.at ?? "?"} ${e.kind} p${e.partition}: ${e.detail}`),
        })),
        faultsEnabled: status.faultsEnabled,
        refusals: status.refusals?.map((r) => `${r.at} ${r.stream} ${r.code} ×${r.count}`) ?? null,
    };
}
