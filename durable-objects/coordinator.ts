/**
 * The coordinator: the single object holding dataflow specs and routing tables, and the
 * alarm-driven monitor (DESIGN.md §4). Its alarm probes the replicas of every dataflow
 * that is due (`probe-schedule.ts`: every heartbeat while active, rarely while idle, at
 * once on a router's report) and acts: takeover, degrade, recovery, reconciliation, all
 * decided in `shared/monitor`. It writes only what changed (`monitor-records.ts`).
 */
import { DurableObject } from "cloudflare:workers";
import { z } from "zod";
import { parseFluxConfig, type FluxConfig } from "../shared/config.ts";
import { desiredConfigs } from "../shared/monitor/desired-config.ts";
import { MonitorSchedule } from "../shared/monitor/probe-schedule.ts";
import { runDueTicks, type DueTickHost } from "../shared/monitor/run-due-ticks.ts";
import { isSameSpec, planDataflow } from "../shared/plan-dataflow.ts";
import type { DataflowSpec } from "../shared/wire/dataflow-spec.ts";
import type { StreamRouting } from "../shared/router/routing-cache.ts";
import type { DataflowRecord, HealthMap } from "../shared/wire/routing.ts";
import { specProblems, type SchemaProblem, type StreamRecord, type StreamSchema } from "../shared/wire/stream-schema.ts";
import { declareStream, listStreams, readStream, type PutStreamResult } from "./stream-store.ts";
import { destroyReplicas, highestEpoch } from "./dataflow-deletion.ts";
import { MonitorRecords } from "./monitor-records.ts";
import { monitorPort } from "./replica-client.ts";

const TOMBSTONE = "tombstone:";

/** Outcome of creating a dataflow. */
type PutDataflowResult =
  | { status: "created" | "unchanged" | "conflict" | "deleting"; record: DataflowRecord }
  | { status: "invalid"; problems: SchemaProblem[] };


export class Coordinator extends DurableObject<Env> {
  readonly #config: FluxConfig = parseFluxConfig(this.env);
  readonly #records = new MonitorRecords(this.ctx.storage.kv);
  readonly #schedule = new MonitorSchedule(this.#config, (id) => this.#records.idleMarker(id));
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
      const firstEpoch = this.#tombstone(id) + 1;
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
      const pending = await this.#finishDeletion(record);
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
   * A router saw a call to `replica` fail, time out or run slow: probe its dataflow now
   * instead of at its next due time (at most once per miss spacing).
   */
  async reportFailure(replica?: string): Promise<void> {
    await this.#armAlarm(this.#schedule.report(replica ?? null, Date.now()));
  }

  override async alarm(): Promise<void> {
    const alarmAtMs = this.#alarmAtMs ?? Date.now();
    this.#alarmAtMs = null;
    let next: number | null = Date.now() + this.#config.heartbeatMs;
    try {
      next = await this.#exclusive(() => runDueTicks(this.#host, this.#schedule, alarmAtMs, this.#config));
    } finally {
      // Re-armed in a finally: a tick that throws is retried a heartbeat later; ticks are idempotent.
      if (next === null) await this.ctx.storage.deleteAlarm();
      else await this.#armAlarm(next, true);
    }
  }

  /** The alarm step's view of this object: its records, replica stubs and clock. */
  readonly #host: DueTickHost = {
    list: () => this.#records.list(),
    health: (id) => this.#records.health(id),
    tickStore: (records) => this.#records.tickStore(records),
    setIdleMarker: (id, fingerprint) => this.#records.setIdleMarker(id, fingerprint),
    port: (records) => this.#port(records),
    finishDeletion: (record) => this.#finishDeletion(record),
    now: () => Date.now(),
  };

  /** Destroys a deleting record's replicas; once all confirmed, removes it and leaves a tombstone. */
  async #finishDeletion(record: DataflowRecord): Promise<string[]> {
    const pending = await destroyReplicas(this.env, record, this.#config.replicaTimeoutMs);
    if (pending.length === 0) {
      this.ctx.storage.kv.put(TOMBSTONE + record.id, Math.max(this.#tombstone(record.id), highestEpoch(record)));
      this.#records.remove(record.id);
    }
    return pending;
  }

  /** The highest epoch a deleted dataflow of this id reached (0: none). */
  #tombstone(id: string): number {
    return z.number().int().min(0).parse(this.ctx.storage.kv.get(TOMBSTONE + id) ?? 0);
  }

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
