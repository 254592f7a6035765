import { advanceRecovery } from "./advance-recovery.ts";
import { desiredConfigs, isConfigured } from "./desired-config.ts";
import { planMonitorTick, replicasToProbe } from "./plan-monitor-tick.ts";
import { sendClockTicks } from "./send-ticks.ts";
import { syncStandby } from "./sync-standby.ts";
/**
 * Replica calls one tick may spend on recoveries, across all partitions: a tick stays
 * short, so probing (and fail-over) never waits long behind a large seeding.
 */
const RECOVERY_CALLS_PER_TICK = 40;
/**
 * Runs one tick for each ready dataflow in `records` (mutated in place).
 * @returns `recoveryPending` when a recovery used up its share of calls and should
 *   continue right away rather than a heartbeat later.
 */
export async function runMonitorTick(port, store, records, nowMs, tuning) {
    const budget = { calls: RECOVERY_CALLS_PER_TICK };
    await Promise.all(records
        .filter(({ record }) => record.ready && !record.deleting)
        .map(async ({ record, health }) => {
        const probes = await probeAll(port, replicasToProbe(record));
        planMonitorTick(record, health, probes, nowMs, tuning);
        await store.save(record, health);
        await reconcile(port, record, probes);
        await Promise.all(record.routes.map((route) => syncStandby(port, route, statusOf(probes, route.primary), route.standby ? statusOf(probes, route.standby) : null).catch(() => undefined)));
        let attached = false;
        for (const route of record.routes) {
            if (route.status !== "recovering")
                continue;
            try {
                const event = await advanceRecovery(port, record, route, budget, () => store.save(record, health));
                if (event)
                    record.events.push({ atMs: nowMs, ...event });
                attached ||= route.recovery?.phase === "attached" || event?.kind === "recovery-finished";
            }
            catch {
                // A replica did not answer; the recovery resumes from its last saved step next tick.
            }
        }
        await store.save(record, health);
        // A standby was attached under a new epoch: tell both replicas now, not a heartbeat later
        // (the fresh one was not among this tick's probes: ask it now).
        if (attached)
            await reconcile(port, record, new Map([...probes, ...(await probeAll(port, freshReplicas(record)))]));
        // Last, so a slow tick write never delays fail-over or recovery; only to replicas that answered.
        await sendClockTicks(port, record, nowMs, (name) => statusOf(probes, name) !== null);
    }));
    return { recoveryPending: budget.calls <= 0 };
}
/** Replicas being seeded or attached, which this tick's probes may predate. */
function freshReplicas(record) {
    return record.routes.flatMap((route) => (route.recovery ? [route.recovery.replica] : []));
}
function statusOf(probes, name) {
    const probe = probes.get(name);
    return probe?.ok ? probe.status : null;
}
async function probeAll(port, names) {
    const results = await Promise.all(names.map(async (name) => {
        try {
            return [name, { ok: true, status: await port.probe(name) }];
        }
        catch (err) {
            return [name, { ok: false, error: err instanceof Error ? err.message : String(err) }];
        }
    }));
    return new Map(results);
}
/** Sends each answering replica the configuration its route wants; retired ones leave the list once told. */
async function reconcile(port, record, probes) {
    await Promise.all(record.routes.flatMap((route) => desiredConfigs(record, route).map(async (desired) => {
        const probe = probes.get(desired.name);
        if (!probe?.ok)
            return;
        let done = isConfigured(probe.status, desired);
        if (!done) {
            try {
                done = (await port.configure(desired.name, desired)).status === "ok";
            }
            catch {
                done = false;
            }
        }
        if (done && desired.role === "retired")
            route.retired = route.retired.filter((name) => name !== desired.name);
    })));
}
