/** The configuration each replica named by the route should hold (none while unavailable). */
export function desiredConfigs(record, route) {
    const base = { dataflowId: record.id, partition: route.partition, spec: record.spec, epoch: route.epoch, version: route.version };
    const configs = route.retired.map((name) => ({ ...base, name, role: "retired", hasStandby: false, standby: null }));
    if (route.status === "unavailable")
        return configs;
    configs.push({
        ...base,
        name: route.primary,
        role: "primary",
        hasStandby: route.standby !== null,
        standby: route.standby,
    });
    if (route.standby !== null)
        configs.push({ ...base, name: route.standby, role: "standby", hasStandby: false, standby: null });
    return configs;
}
/** Whether a replica's reported status already matches `desired`. */
export function isConfigured(status, desired) {
    if (status === null)
        return desired.role === "retired";
    if (status.epoch > desired.epoch)
        return true;
    return (status.epoch === desired.epoch &&
        status.role === desired.role &&
        status.hasStandby === desired.hasStandby &&
        status.standby === (desired.standby ?? null));
}
