/**
 * When the monitor probes each dataflow (DESIGN.md §4: "probes an idle dataflow rarely"),
 * as pure decisions over what the last probes found. A dataflow is probed at once after a
 * report of a failed or slow call to one of its replicas (from a router, a reader or an
 * upstream primary), every `missSpacingMs` while a replica it routes to has missed a probe
 * (so a failure is confirmed quickly), and otherwise:
 * - every heartbeat while it needs the monitor's attention: a partition not healthy or
 *   recovering, a replica that did not answer with its state, clock ticks to write, or
 *   key-group moves to carry out (issue 28);
 * - every `watchProbeMs` (issue 29) while it is healthy and active: the data path watches it,
 *   since every call a router, a reader or an upstream primary makes to its replicas, and
 *   every forward of a primary to its standby (which fails the write it carries), reports a
 *   failure at once; the probe is the safety net for replicas no call reaches;
 * - rarely once it is idle (healthy, no clock ticks, no replica's LSN moved for
 *   `idleAfterMs`): after as long again as it has been quiet, so probes thin out
 *   geometrically, at most `idleProbeMs` apart.
 * Any LSN progress seen by a probe makes it active again.
 */
import type { DataflowRecord, HealthMap } from "../wire/routing.ts";
import { replicasToProbe } from "./plan-monitor-tick.ts";

/** Schedule settings from {@link FluxConfig}, ms. */
export interface ScheduleTuning {
  heartbeatMs: number;
  watchProbeMs: number;
  idleProbeMs: number;
  idleAfterMs: number;
  missSpacingMs: number;
}

/** What the schedule remembers of one dataflow between ticks (in memory; see {@link DataflowClock.idle}). */
export interface DataflowClock {
  /** Start of this dataflow's last tick (null: not probed by this instance yet). */
  probedAtMs: number | null;
  /** The routed replicas' LSNs at the last probe (see {@link lsnFingerprint}); null: unknown. */
  fingerprint: string | null;
  /** When the fingerprint last changed. */
  progressAtMs: number;
  /** Idle as of the last tick; the monitor persists an {@link IdleMarker} when this flips. */
  idle: boolean;
}

/** What is stored while a dataflow is idle, so a restarted (or woken) monitor keeps its pace. */
export interface IdleMarker {
  fingerprint: string;
  /** When its LSNs last moved, epoch ms. */
  quietSinceMs: number;
}

/** A clock for a dataflow this instance has not probed: active unless an idle marker was stored. */
export function freshClock(marker: IdleMarker | null): DataflowClock {
  return marker === null
    ? { probedAtMs: null, fingerprint: null, progressAtMs: Number.NEGATIVE_INFINITY, idle: false }
    : { probedAtMs: null, fingerprint: marker.fingerprint, progressAtMs: marker.quietSinceMs, idle: true };
}

/** The replicas that serve a dataflow's routes (retired ones, possibly down for good, excluded). */
function servingReplicas(record: DataflowRecord): string[] {
  return record.routes.flatMap((r) => [r.primary, ...(r.standby ? [r.standby] : []), ...(r.recovery ? [r.recovery.replica] : [])]);
}

/**
 * The serving replicas' logged LSNs as last probed, as one comparable string. Only `lsn`,
 * which moves when something is written: a replica reloaded after hibernating replays its
 * stable entries again (its stored applied LSN may lag, `progress-durability.ts`), and that
 * movement of `appliedLsn` is no traffic.
 */
function lsnFingerprint(record: DataflowRecord, health: HealthMap): string {
  return JSON.stringify(servingReplicas(record).map((name) => [name, health[name]?.last?.lsn ?? null]));
}

/**
 * Whether a serving replica of a partition that can still fail over has missed its last
 * probe (an unavailable partition waits for a replica to return at the heartbeat).
 */
function hasSuspect(record: DataflowRecord, health: HealthMap): boolean {
  const serving = servingReplicas({ ...record, routes: record.routes.filter((r) => r.status !== "unavailable") });
  return serving.some((name) => (health[name]?.misses ?? 0) > 0);
}

/**
 * Whether the dataflow could be idle at all, and while it is active whether the data path
 * watches it: healthy everywhere, every replica answering with state, no clock ticks to write.
 */
function canIdle(record: DataflowRecord, health: HealthMap): boolean {
  return (
    record.spec.idleAdvanceMs === undefined &&
    record.moves.length === 0 &&
    record.routes.every((r) => r.status === "healthy" && r.recovery === null) &&
    servingReplicas(record).every((name) => health[name]?.misses === 0 && health[name]?.last)
  );
}

/**
 * Updates a dataflow's clock after a tick that started at `nowMs`.
 * @returns the new clock; compare `idle` with the old one to know whether to persist it.
 */
export function observeTick(clock: DataflowClock, record: DataflowRecord, health: HealthMap, nowMs: number, tuning: ScheduleTuning): DataflowClock {
  const fingerprint = lsnFingerprint(record, health);
  const moved = fingerprint !== clock.fingerprint;
  const progressAtMs = moved ? nowMs : clock.progressAtMs;
  const idle = !moved && canIdle(record, health) && nowMs - progressAtMs >= tuning.idleAfterMs;
  return { probedAtMs: nowMs, fingerprint, progressAtMs, idle };
}

/**
 * When the dataflow should next be probed, epoch ms.
 * @param reportedAtMs the latest router report naming one of its replicas (null: none since its last tick).
 */
export function nextProbeAtMs(clock: DataflowClock, record: DataflowRecord, health: HealthMap, reportedAtMs: number | null, tuning: ScheduleTuning): number {
  const last = clock.probedAtMs;
  if (last === null) return Number.NEGATIVE_INFINITY;
  // Misses closer together than the spacing count once: probing sooner would not fail over sooner.
  const soonest = last + tuning.missSpacingMs;
  if (reportedAtMs !== null && reportedAtMs >= last) return Math.max(reportedAtMs, soonest);
  if (hasSuspect(record, health)) return soonest;
  if (!clock.idle) return last + (canIdle(record, health) ? Math.max(tuning.heartbeatMs, tuning.watchProbeMs) : tuning.heartbeatMs);
  // As long again as it has been quiet: a dataflow that just stopped is still watched closely.
  return last + Math.max(tuning.heartbeatMs, Math.min(tuning.idleProbeMs, last - clock.progressAtMs));
}

/**
 * Whether a dataflow due at `dueAtMs` is probed by an alarm standing for `nowMs`: everything
 * due within a heartbeat goes along, so active dataflows stay in step and share alarms.
 */
export function isDue(dueAtMs: number, nowMs: number, tuning: ScheduleTuning): boolean {
  return dueAtMs <= nowMs + tuning.heartbeatMs;
}

/**
 * A monitor's schedule state: one clock per dataflow and the routers' latest
 * reports, all in memory. Only each dataflow's idle marker is persisted (by the caller,
 * when {@link MonitorSchedule.observe} says it flipped), so an instance woken from
 * hibernation keeps probing an idle dataflow rarely.
 */
export class MonitorSchedule {
  readonly #clocks = new Map<string, DataflowClock>();
  /** Latest report per replica name ("": about every dataflow), epoch ms. */
  readonly #reports = new Map<string, number>();
  readonly #hurried = new Set<string>();
  #lastTickAtMs = Number.NEGATIVE_INFINITY;

  readonly #tuning: ScheduleTuning;
  readonly #storedIdle: (id: string) => IdleMarker | null;

  /** @param storedIdle the idle marker persisted for a dataflow, or null. */
  constructor(tuning: ScheduleTuning, storedIdle: (id: string) => IdleMarker | null) {
    this.#tuning = tuning;
    this.#storedIdle = storedIdle;
  }

  /**
   * Records a router's report that `replica` (null: some replica) failed or is slow.
   * @returns when the alarm should fire for it: now, unless a tick ran less than a miss spacing ago.
   */
  report(replica: string | null, nowMs: number): number {
    const key = replica ?? "";
    this.#reports.set(key, Math.max(this.#reports.get(key) ?? Number.NEGATIVE_INFINITY, nowMs));
    return Math.max(nowMs, this.#lastTickAtMs + this.#tuning.missSpacingMs);
  }

  /** When `record` is next due, epoch ms (−∞: now). */
  dueAtMs(record: DataflowRecord, health: HealthMap): number {
    if (this.#hurried.has(record.id)) return Number.NEGATIVE_INFINITY;
    return nextProbeAtMs(this.#clock(record.id), record, health, this.#reportedAtMs(record), this.#tuning);
  }

  /** Makes `id` due at once until its next tick (a recovery with work left continues right away). */
  hurry(id: string): void {
    this.#hurried.add(id);
  }

  /**
   * Updates the dataflow's clock after its tick that started at `startedAtMs`.
   * @returns the clock's idle state and whether it flipped (the caller persists the marker then).
   */
  observe(record: DataflowRecord, health: HealthMap, startedAtMs: number): { idle: boolean; marker: IdleMarker; flipped: boolean } {
    const before = this.#clock(record.id);
    const after = observeTick(before, record, health, startedAtMs, this.#tuning);
    this.#clocks.set(record.id, after);
    this.#hurried.delete(record.id);
    this.#lastTickAtMs = Math.max(this.#lastTickAtMs, startedAtMs);
    for (const name of replicasToProbe(record)) if ((this.#reports.get(name) ?? Number.POSITIVE_INFINITY) < startedAtMs) this.#reports.delete(name);
    return { idle: after.idle, marker: { fingerprint: after.fingerprint ?? "", quietSinceMs: after.progressAtMs }, flipped: after.idle !== before.idle };
  }

  /** Drops the clocks of dataflows no longer in `ids`. */
  retain(ids: ReadonlySet<string>): void {
    for (const id of this.#clocks.keys()) if (!ids.has(id)) this.#clocks.delete(id);
  }

  #clock(id: string): DataflowClock {
    let clock = this.#clocks.get(id);
    if (!clock) this.#clocks.set(id, (clock = freshClock(this.#storedIdle(id))));
    return clock;
  }

  #reportedAtMs(record: DataflowRecord): number | null {
    const times = ["", ...replicasToProbe(record)].map((name) => this.#reports.get(name) ?? Number.NEGATIVE_INFINITY);
    const latest = Math.max(...times);
    return latest === Number.NEGATIVE_INFINITY ? null : latest;
  }
}
