/**
 * The coordinator: the single object holding dataflow specs and routing tables, and the
 * alarm-driven monitor (DESIGN.md §4). Every heartbeat it probes all replicas and acts:
 * takeover, degrade, recovery, reconciliation, all decided in `shared/monitor`. The
 * alarm re-arms first, so a tick that throws is simply retried by the next one.
 */
import { DurableObject } from "cloudflare:workers";
import { z } from "zod";
import { parseFluxConfig, type FluxConfig } from "../shared/config.ts";
import { desiredConfigs } from "../shared/monitor/desired-config.ts";
import { runMonitorTick } from "../shared/monitor/run-monitor-tick.ts";
import { isSameSpec, planDataflow } from "../shared/plan-dataflow.ts";
import type { DataflowSpec } from "../shared/wire/dataflow-spec.ts";
import type { StreamRouting } from "../shared/router/routing-cache.ts";
import { DataflowRecordSchema, HealthMapSchema, type DataflowRecord, type HealthMap } from "../shared/wire/routing.ts";
import { specProblems, type SchemaProblem, type StreamRecord, type StreamSchema } from "../shared/wire/stream-schema.ts";
import { declareStream, listStreams, readStream, type PutStreamResult } from "./stream-store.ts";
import { destroyReplicas, highestEpoch } from "./dataflow-deletion.ts";
import { countedKv } from "../platform/counted-sql.ts";
import { monitorPort } from "../platform/replica-ports.ts";

const DATAFLOW = "dataflow:";
const HEALTH = "health:";
const TOMBSTONE = "tombstone:";

/** Outcome of creating a dataflow. */
type PutDataflowResult =
  | { status: "created" | "unchanged" | "conflict" | "deleting"; record: DataflowRecord }
  | { status: "invalid"; problems: SchemaProblem[] };


export class Coordinator extends DurableObject<Env> {
  readonly #config: FluxConfig = parseFluxConfig(this.env);
  /** Storage with every key read and written counted (issue 12). */
  readonly #kv = countedKv(this.ctx.storage.kv);
  /** Serialises writers (creation and monitor ticks) across their awaits. */
  #lock: Promise<unknown> = Promise.resolve();

  /**
   * Creates a dataflow, or confirms an identical one; a different spec under an existing
   * id is a conflict. Re-sending the same spec finishes a creation that was interrupted.
   */
  async putDataflow(id: string, spec: DataflowSpec): Promise<PutDataflowResult> {
    return this.#exclusive(async () => {
      const existing = this.#read(id);
      if (existing?.deleting) return { status: "deleting", record: existing };
      if (existing && !isSameSpec(existing.spec, spec)) return { status: "conflict", record: existing };
      const declared = readStream(this.#kv, spec.stream);
      const problems = !existing && declared ? specProblems(declared.schema, spec) : [];
      if (problems.length > 0) return { status: "invalid", problems };
      const firstEpoch = this.#tombstone(id) + 1;
      const record = existing ?? planDataflow(id, spec, Date.now(), this.#config.locationHints, firstEpoch);
      if (!existing) this.#kv.put(DATAFLOW + id, record);
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
        this.#kv.put(DATAFLOW + id, record);
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
      const record = this.#read(id);
      if (!record) return { status: "not-found" };
      record.deleting = true;
      this.#kv.put(DATAFLOW + id, record);
      const pending = await this.#finishDeletion(record);
      return { status: pending.length === 0 ? "deleted" : "deleting", stream: record.spec.stream, pending };
    });
  }

  /** Declares (or replaces) a stream's schema, unless a dataflow reading it would no longer fit. */
  async putStream(name: string, schema: StreamSchema): Promise<PutStreamResult> {
    return this.#exclusive(async () => declareStream(this.#kv, name, schema, await this.listDataflows()));
  }

  async getStream(name: string): Promise<StreamRecord | null> {
    return readStream(this.#kv, name);
  }

  async listStreams(): Promise<StreamRecord[]> {
    return listStreams(this.#kv);
  }

  /** What a router needs to accept a batch for `stream`: its ready dataflows and its declared schema. */
  async routeStream(stream: string): Promise<StreamRouting> {
    const dataflows = (await this.listDataflows()).filter((record) => record.ready && !record.deleting && record.spec.stream === stream);
    return { dataflows, schema: readStream(this.#kv, stream)?.schema ?? null };
  }

  async getDataflow(id: string): Promise<DataflowRecord | null> {
    return this.#read(id);
  }

  async listDataflows(): Promise<DataflowRecord[]> {
    return [...this.#kv.list({ prefix: DATAFLOW })].map(([, value]) => DataflowRecordSchema.parse(value));
  }

  /** Per replica, what the monitor last saw. */
  async health(id: string): Promise<HealthMap> {
    return this.#health(id);
  }

  /** A router saw a replica time out or fail: probe at once instead of at the next heartbeat. */
  async reportFailure(): Promise<void> {
    await this.#armAlarm(Date.now());
  }

  override async alarm(): Promise<void> {
    // Re-arm first: alarms are retried and may be delivered twice; a tick is idempotent.
    await this.ctx.storage.setAlarm(Date.now() + this.#config.heartbeatMs);
    let pending = false;
    await this.#exclusive(async () => {
      const all = await this.listDataflows();
      for (const record of all.filter((r) => r.deleting)) await this.#finishDeletion(record);
      const records = all.filter((r) => !r.deleting).map((record) => ({ record, health: this.#health(record.id) }));
      // Nothing left to watch: stop ticking until a dataflow is created again.
      if (all.length === 0) await this.ctx.storage.deleteAlarm();
      if (records.length === 0) return;
      const port = this.#port(records.map(({ record }) => record));
      const store = {
        save: async (record: DataflowRecord, health: HealthMap) => {
          this.#kv.put(DATAFLOW + record.id, record);
          this.#kv.put(HEALTH + record.id, health);
        },
      };
      pending = (await runMonitorTick(port, store, records, Date.now(), this.#config)).recoveryPending;
    });
    // A recovery with work left continues at once; probes still run between its slices.
    if (pending) await this.#armAlarm(Date.now());
  }

  /** Destroys a deleting record's replicas; once all confirmed, removes it and leaves a tombstone. */
  async #finishDeletion(record: DataflowRecord): Promise<string[]> {
    const pending = await destroyReplicas(this.env, record, this.#config.replicaTimeoutMs);
    if (pending.length === 0) {
      this.#kv.put(TOMBSTONE + record.id, Math.max(this.#tombstone(record.id), highestEpoch(record)));
      this.#kv.delete(DATAFLOW + record.id);
      this.#kv.delete(HEALTH + record.id);
    }
    return pending;
  }

  /** The highest epoch a deleted dataflow of this id reached (0: none). */
  #tombstone(id: string): number {
    return z.number().int().min(0).parse(this.#kv.get(TOMBSTONE + id) ?? 0);
  }

  #read(id: string): DataflowRecord | null {
    const value = this.#kv.get(DATAFLOW + id);
    return value === undefined ? null : DataflowRecordSchema.parse(value);
  }

  /**
   * Probe history is soft state that the next probes rebuild: one stored by an older
   * version that no longer parses is dropped (the monitor starts counting afresh) rather
   * than stopping every monitor tick.
   */
  #health(id: string): HealthMap {
    const parsed = HealthMapSchema.safeParse(this.#kv.get(HEALTH + id) ?? {});
    return parsed.success ? parsed.data : {};
  }

  /** Replica calls with the configured deadlines, placing replicas by their records' location hints. */
  #port(records: readonly DataflowRecord[]) {
    const hints = new Map(records.flatMap((record) => record.routes.flatMap((r) => Object.entries(r.hints))));
    return monitorPort(this.env, this.#config.probeTimeoutMs, this.#config.replicaTimeoutMs, (name) => hints.get(name));
  }

  /** Sets the alarm to `atMs` unless one is already due sooner. */
  async #armAlarm(atMs: number): Promise<void> {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > atMs) await this.ctx.storage.setAlarm(atMs);
  }

  #exclusive<T>(run: () => Promise<T>): Promise<T> {
    const next = this.#lock.then(run, run);
    this.#lock = next.catch(() => undefined);
    return next;
  }
}
