/**
 * The coordinator: the single object holding dataflow specs and routing tables, and the
 * alarm-driven monitor (DESIGN.md §4). Its alarm probes the replicas of every dataflow
 * that is due (`probe-schedule.ts`: every heartbeat while active, rarely while idle, at
 * once on a router's report) and acts: takeover, degrade, recovery, reconciliation, all
 * decided in `shared/monitor`. It writes only what changed (`monitor-records.ts`).
 */
import { DurableObject } from "cloudflare:workers";
import { parseFluxConfig, type FluxConfig } from "../shared/config.ts";
import { desiredConfigs } from "../shared/monitor/desired-config.ts";
import { MonitorSchedule } from "../shared/monitor/probe-schedule.ts";
import { runDueTicks, type DueTickHost } from "../shared/monitor/run-due-ticks.ts";
import { suspectVerdict } from "../shared/monitor/suspect-verdict.ts";
import { isSameSpec, planDataflow } from "../shared/plan-dataflow.ts";
import type { DataflowSpec } from "../shared/wire/dataflow-spec.ts";
import type { StreamRouting } from "../shared/router/routing-cache.ts";
import type { DataflowRecord, HealthMap, SuspectVerdict } from "../shared/wire/routing.ts";
import { specProblems, type SchemaProblem, type StreamRecord, type StreamSchema } from "../shared/wire/stream-schema.ts";
import { declareStream, listStreams, readStream, type PutStreamResult } from "./stream-store.ts";
import { finishDeletion } from "./dataflow-deletion.ts";
import { MonitorRecords } from "./monitor-records.ts";
import { monitorPort } from "./replica-client.ts";
import { SuspectWaiters } from "./suspect-waiters.ts";

/** Outcome of creating a dataflow. */
type PutDataflowResult =
  | { status: "created" | "unchanged" | "conflict" | "deleting"; record: DataflowRecord }
  | { status: "invalid"; problems: SchemaProblem[] };

export class Coordinator extends DurableObject<Env> {
  readonly #config: FluxConfig = parseFluxConfig(this.env);
  readonly #records = new MonitorRecords(this.ctx.storage.kv);
  readonly #schedule = new MonitorSchedule(this.#config, (id) => this.#records.idleMarker(id));
  readonly #suspects = new SuspectWaiters();
  /** When this instance last armed the alarm (null: not since it last fired, or unknown). */
  #alarmAtMs: number | null = null;
  /** Serialises writers (creation and monitor ticks) across their awaits. */
  #lock: Promise<unknown> = Promise.resolve();

  /**
   * Creates a dataflow, or confirms an identical one; a different spec under an existing
   * id is a conflict. Re-sending the same spec finishes a creation that was interrupted.
   */
  async putDataflow(id: string, spec: DataflowSpec): Promise<PutDataflowResult> {
    return this.#exclusive(async () => {
      const existing = this.#records.read(id);
      if (existing?.deleting) return { status: "deleting", record: existing };
      if (existing && !isSameSpec(existing.spec, spec)) return { status: "conflict", record: existing };
      const declared = readStream(this.ctx.storage.kv, spec.stream);
      const problems = !existing && declared ? specProblems(declared.schema, spec) : [];
      if (problems.length > 0) return { status: "invalid", problems };
      const firstEpoch = this.#records.tombstone(id) + 1;
      const record = existing ?? planDataflow(id, spec, Date.now(), this.#config.locationHints, firstEpoch);
      if (!existing) this.#records.put(record);
      if (!record.ready) {
        const port = this.#port([record]);
        await Promise.all(
          record.routes.flatMap((route) =>
            desiredConfigs(record, route).map(async (init) => {
              const reply = await port.configure(init.name, { ...init, create: true });
              if (reply.status !== "ok") throw new Error(`replica ${init.name} refused its configuration: ${reply.status}`);
            }),
          ),
        );
        record.ready = true;
        this.#records.put(record);
        await this.#armAlarm(Date.now() + this.#config.heartbeatMs);
      }
      return { status: existing?.ready ? "unchanged" : "created", record };
    });
  }

  /**
   * Deletes a dataflow: routers stop using it at once; its replicas drop their state (the
   * monitor retries any that do not answer). @returns the replicas still to confirm.
   */
  async deleteDataflow(id: string): Promise<{ status: "not-found" } | { status: "deleted" | "deleting"; stream: string; pending: string[] }> {
    return this.#exclusive(async () => {
      const record = this.#records.read(id);
      if (!record) return { status: "not-found" };
      record.deleting = true;
      this.#records.put(record);
      const pending = await finishDeletion(this.env, this.#records, record, this.#config.replicaTimeoutMs);
      return { status: pending.length === 0 ? "deleted" : "deleting", stream: record.spec.stream, pending };
    });
  }

  /** Declares (or replaces) a stream's schema, unless a dataflow reading it would no longer fit. */
  async putStream(name: string, schema: StreamSchema): Promise<PutStreamResult> {
    return this.#exclusive(async () => declareStream(this.ctx.storage.kv, name, schema, await this.listDataflows()));
  }

  async getStream(name: string): Promise<StreamRecord | null> {
    return readStream(this.ctx.storage.kv, name);
  }

  async listStreams(): Promise<StreamRecord[]> {
    return listStreams(this.ctx.storage.kv);
  }

  /** What a router needs to accept a batch for `stream`: its ready dataflows and its declared schema. */
  async routeStream(stream: string): Promise<StreamRouting> {
    const dataflows = (await this.listDataflows()).filter((record) => record.ready && !record.deleting && record.spec.stream === stream);
    return { dataflows, schema: readStream(this.ctx.storage.kv, stream)?.schema ?? null };
  }

  async getDataflow(id: string): Promise<DataflowRecord | null> {
    return this.#records.read(id);
  }

  async listDataflows(): Promise<DataflowRecord[]> {
    return this.#records.list();
  }

  /** Per replica, what the monitor last saw. */
  async health(id: string): Promise<HealthMap> {
    return this.#records.health(id);
  }

  /**
   * A router saw a call to `replica` fail or time out: probe its dataflow now (in this
   * call, not through the alarm) instead of at its next due time, at most once per miss spacing.
   */
  async reportFailure(replica?: string): Promise<void> {
    const atMs = this.#schedule.report(replica ?? null, Date.now());
    if (atMs > Date.now()) await this.#armAlarm(atMs);
    else await this.#tick(atMs);
  }

  /**
   * A router's call to `replica` is still unanswered after `FLUX_SUSPECT_MS`: probe now, and
   * answer once the replica was replaced or has answered a probe sent since (or at the
   * router's call timeout), so the router stops waiting on a replica that was failed over.
   */
  async reportSuspect(replica: string): Promise<SuspectVerdict> {
    const reportedAtMs = Date.now();
    const known = suspectVerdict(this.#records.list(), (id) => this.#records.health(id), replica, reportedAtMs);
    if (known === "replaced") return known;
    const verdict = this.#suspects.wait(replica, reportedAtMs, this.#config.replicaTimeoutMs);
    // Not awaited: the verdict comes as soon as a probe or a saved takeover decides it, which
    // may be before the tick ends (it goes on with recoveries); a failed tick is retried by the alarm.
    void this.reportFailure(replica).catch(() => undefined);
    return verdict;
  }

  override async alarm(): Promise<void> {
    const alarmAtMs = this.#alarmAtMs ?? Date.now();
    this.#alarmAtMs = null;
    await this.#tick(alarmAtMs);
  }

  /** Ticks what is due by `atMs`, re-arms the alarm for the next due time, and answers waiting routers. */
  async #tick(atMs: number): Promise<void> {
    let next: number | null = Date.now() + this.#config.heartbeatMs;
    try {
      next = await this.#exclusive(() => runDueTicks(this.#host, this.#schedule, atMs, this.#config));
    } finally {
      // Re-armed in a finally: a tick that throws is retried a heartbeat later; ticks are idempotent.
      if (next === null) await this.ctx.storage.deleteAlarm();
      else await this.#armAlarm(next, true);
      this.#settleSuspects();
    }
  }

  /** Answers the routers waiting for a verdict that the latest records and probes allow. */
  #settleSuspects(): void {
    const records = this.#records.list();
    this.#suspects.settle((replica, reportedAtMs) => suspectVerdict(records, (id) => this.#records.health(id), replica, reportedAtMs));
  }

  /** The alarm step's view of this object: its records, replica stubs and clock. */
  readonly #host: DueTickHost = {
    list: () => this.#records.list(),
    health: (id) => this.#records.health(id),
    // A saved takeover frees the routers waiting on the replaced replica at once.
    tickStore: (records) => this.#records.tickStore(records, () => this.#settleSuspects()),
    setIdleMarker: (id, fingerprint) => this.#records.setIdleMarker(id, fingerprint),
    port: (records) => this.#port(records),
    finishDeletion: (record) => finishDeletion(this.env, this.#records, record, this.#config.replicaTimeoutMs),
    now: () => Date.now(),
  };

  /** Replica calls with the configured deadlines, placing replicas by their records' location hints. */
  #port(records: readonly DataflowRecord[]) {
    const hints = new Map(records.flatMap((record) => record.routes.flatMap((r) => Object.entries(r.hints))));
    return monitorPort(this.env, this.#config.probeTimeoutMs, this.#config.replicaTimeoutMs, (name) => hints.get(name));
  }

  /**
   * Sets the alarm to `atMs` unless one is already due sooner; an alarm time already past
   * counts as none (it fired and is used up). `replace`: after a tick, whose result
   * already includes every report recorded before it ended.
   */
  async #armAlarm(atMs: number, replace = false): Promise<void> {
    const current = replace ? null : (this.#alarmAtMs ?? (await this.ctx.storage.getAlarm()));
    if (current !== null && current <= atMs && current > Date.now()) return;
    this.#alarmAtMs = atMs;
    await this.ctx.storage.setAlarm(atMs);
  }

  #exclusive<T>(run: () => Promise<T>): Promise<T> {
    const next = this.#lock.then(run, run);
    this.#lock = next.catch(() => undefined);
    return next;
  }
}
