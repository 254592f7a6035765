/**
 * A dataflow monitor's shell (issue 29: one object per dataflow) (DESIGN.md §4): runs the due ticks on the alarm or at
 * once on a router's report, arms the alarm for the next due time (`probe-schedule.ts`),
 * and answers routers waiting for a verdict on a slow replica. Decisions live in
 * `shared/monitor`; this holds the timers, stubs and storage.
 */
import type { FluxConfig } from "../shared/config.ts";
import { MonitorSchedule } from "../shared/monitor/probe-schedule.ts";
import { runDueTicks, type DueTickHost } from "../shared/monitor/run-due-ticks.ts";
import { suspectVerdict } from "../shared/monitor/suspect-verdict.ts";
import type { DataflowRecord, SuspectVerdict } from "../shared/wire/routing.ts";
import { finishDeletion } from "./dataflow-deletion.ts";
import type { MonitorRecords } from "./monitor-records.ts";
import { monitorPort } from "../platform/replica-ports.ts";
import { SuspectWaiters } from "./suspect-waiters.ts";

/** What the shell needs from its Durable Object. */
export interface MonitorObject {
  env: Env;
  storage: DurableObjectStorage;
  config: FluxConfig;
  records: MonitorRecords;
  /** Runs `run` exclusively with the object's other writers. */
  exclusive<T>(run: () => Promise<T>): Promise<T>;
  /** A deletion the alarm finished (every replica confirmed): tell whoever lists dataflows. */
  onDeleted(id: string): Promise<void>;
}

export class MonitorAlarm {
  readonly #o: MonitorObject;
  readonly #schedule: MonitorSchedule;
  readonly #suspects = new SuspectWaiters();
  /** When this instance last armed the alarm (null: not since it last fired, or unknown). */
  #alarmAtMs: number | null = null;
  readonly #host: DueTickHost;

  constructor(o: MonitorObject) {
    this.#o = o;
    this.#schedule = new MonitorSchedule(o.config, (id) => o.records.idleMarker(id));
    this.#host = {
      list: () => o.records.list(),
      health: (id) => o.records.health(id),
      // A saved takeover frees the routers waiting on the replaced replica at once.
      tickStore: (records) => o.records.tickStore(records, () => this.#settleSuspects()),
      setIdleMarker: (id, fingerprint) => o.records.setIdleMarker(id, fingerprint),
      port: (records) => this.port(records),
      finishDeletion: async (record) => {
        const pending = await finishDeletion(o.env, o.records, record, o.config.replicaTimeoutMs);
        if (pending.length === 0) await o.onDeleted(record.id);
      },
      now: () => Date.now(),
      // Unexpected monitor errors (not failed replica calls) go to the Worker's log; `/v1/status` shows them as events.
      log: { error: (context, err) => console.error(`monitor: ${context}:`, err) },
    };
  }

  /** Work was queued for dataflow `id` (key-group moves): its next tick runs at once, through the alarm. */
  async hurry(id: string): Promise<void> {
    this.#schedule.hurry(id);
    await this.arm(Date.now());
  }

  /** A failed or timed-out call to `replica`: tick now (in this call, not through the alarm), at most once per miss spacing. */
  async report(replica: string | null): Promise<void> {
    const atMs = this.#schedule.report(replica, Date.now());
    if (atMs > Date.now()) await this.arm(atMs);
    else await this.#tick(atMs);
  }

  /** A slow call to `replica`: probe now; resolves once the replica was replaced or answered a probe sent since. */
  async suspect(replica: string): Promise<SuspectVerdict> {
    const reportedAtMs = Date.now();
    const known = suspectVerdict(this.#o.records.list(), (id) => this.#o.records.health(id), replica, reportedAtMs);
    if (known === "replaced") return known;
    const verdict = this.#suspects.wait(replica, reportedAtMs, this.#o.config.replicaTimeoutMs);
    // Not awaited: the verdict comes as soon as a probe or a saved takeover decides it, which
    // may be before the tick ends (it goes on with recoveries); a failed tick is retried by the alarm.
    void this.report(replica).catch(() => undefined);
    return verdict;
  }

  /** The alarm fired: it stands for the time it was armed for. */
  async alarm(): Promise<void> {
    const alarmAtMs = this.#alarmAtMs ?? Date.now();
    this.#alarmAtMs = null;
    await this.#tick(alarmAtMs);
  }

  /**
   * Sets the alarm to `atMs` unless one is already due sooner; an alarm time already past
   * counts as none (it fired and is used up). `replace`: after a tick, whose result
   * already includes every report recorded before it ended.
   */
  async arm(atMs: number, replace = false): Promise<void> {
    const current = replace ? null : (this.#alarmAtMs ?? (await this.#o.storage.getAlarm()));
    if (current !== null && current <= atMs && current > Date.now()) return;
    this.#alarmAtMs = atMs;
    await this.#o.storage.setAlarm(atMs);
  }

  /** Ticks what is due by `atMs`, re-arms the alarm for the next due time, and answers waiting routers. */
  async #tick(atMs: number): Promise<void> {
    let next: number | null = Date.now() + this.#o.config.heartbeatMs;
    try {
      next = await this.#o.exclusive(() => runDueTicks(this.#host, this.#schedule, atMs, this.#o.config));
    } finally {
      // Re-armed in a finally: a tick that throws is retried a heartbeat later; ticks are idempotent.
      if (next === null) await this.#o.storage.deleteAlarm();
      // Unchanged (a tick that found nothing due): no write.
      else if (next !== this.#alarmAtMs) await this.arm(next, true);
      this.#settleSuspects();
    }
  }

  /** Answers the routers waiting for a verdict that the latest records and probes allow. */
  #settleSuspects(): void {
    const records = this.#o.records.list();
    this.#suspects.settle((replica, reportedAtMs) => suspectVerdict(records, (id) => this.#o.records.health(id), replica, reportedAtMs));
  }

  /** Replica calls with the configured deadlines, placing replicas by their records' location hints. */
  port(records: readonly DataflowRecord[]) {
    const hints = new Map(records.flatMap((record) => record.routes.flatMap((r) => Object.entries(r.hints))));
    const { probeTimeoutMs, replicaTimeoutMs, seedPacing } = this.#o.config;
    return monitorPort(this.#o.env, probeTimeoutMs, replicaTimeoutMs, seedPacing, (name) => hints.get(name));
  }
}
