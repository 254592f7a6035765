/**
 * The monitor of one dataflow (issue 29; DESIGN.md §4): its routing table, probe history and
 * alarm, in an object of its own named after the dataflow. It probes that dataflow's
 * replicas when due (every heartbeat while active, rarely while idle, at once on a report)
 * and acts: takeover, degrade, recovery, reconciliation, all decided in `shared/monitor`.
 * Routers, readers and upstream primaries ask it for the dataflow's routing; nothing here
 * waits on another dataflow's monitor, so a slow or failed one delays only its own dataflow.
 */
import { DurableObject } from "cloudflare:workers";
import { parseFluxConfig, type FluxConfig } from "../shared/config.ts";
import type { DataflowSpec } from "../shared/wire/dataflow-spec.ts";
import type { DataflowRecord, HealthMap, SuspectVerdict } from "../shared/wire/routing.ts";
import { countedKv } from "../platform/counted-sql.ts";
import { coordinatorStub } from "../platform/object-calls.ts";
import { finishDeletion } from "./dataflow-deletion.ts";
import { MonitorAlarm } from "./monitor-alarm.ts";
import { MonitorRecords } from "./monitor-records.ts";
import { adoptState, createDataflow, linkReader, resultsSoFar, type AdoptedState, type MonitorCreateResult } from "./monitor-steps.ts";

/** What a lookup finds: the record (null: none), and whether this monitor ever held one (false: a dataflow from before the upgrade may not be migrated yet). */
export interface MonitorLookup {
  record: DataflowRecord | null;
  known: boolean;
}

export class DataflowMonitor extends DurableObject<Env> {
  readonly #config: FluxConfig = parseFluxConfig(this.env);
  /** Storage with every key read and written counted (issue 12). */
  readonly #kv = countedKv(this.ctx.storage.kv);
  readonly #records = new MonitorRecords(this.#kv);
  readonly #monitor = new MonitorAlarm({
    env: this.env,
    storage: this.ctx.storage,
    config: this.#config,
    records: this.#records,
    exclusive: (run) => this.#exclusive(run),
    // Best effort: the registry also drops an entry whose monitor holds no record when it next looks.
    onDeleted: (id) => coordinatorStub(this.env).forgetDataflow(id).catch(() => undefined),
  });
  /** Serialises writers (creation, links, deletion, monitor ticks) across their awaits. */
  #lock: Promise<unknown> = Promise.resolve();

  /** Creates the dataflow, or confirms an identical one (see `createDataflow`); then watches it. */
  async create(id: string, spec: DataflowSpec): Promise<MonitorCreateResult> {
    return this.#exclusive(async () => {
      if (this.#kv.get("known") !== true) this.#kv.put("known", true);
      const result = await createDataflow(this.#records, (records) => this.#monitor.port(records), this.#config, id, spec);
      if (result.status === "created") await this.#monitor.arm(Date.now() + this.#config.heartbeatMs);
      // Moves to carry out: the alarm starts on them at once.
      if (result.status === "rescaling") await this.#monitor.hurry(id);
      return result;
    });
  }

  /** The dataflow's record, as routers, readers and upstream primaries route by. */
  async lookup(): Promise<MonitorLookup> {
    const record = this.#record();
    return { record, known: record !== null || this.#kv.get("known") === true };
  }

  /** The record and, per replica, what the monitor last saw (null: no dataflow here). */
  async view(): Promise<{ record: DataflowRecord; health: HealthMap } | null> {
    const record = this.#record();
    return record ? { record, health: this.#records.health(record.id) } : null;
  }

  /** Adds or removes a stage reading this dataflow (issue 27). @returns the replicas not told yet (retried by this monitor). */
  async linkReader(stage: string, add: boolean): Promise<string[]> {
    return this.#exclusive(async () => {
      const record = this.#record();
      if (!record || record.deleting) return [];
      const missed = await linkReader(this.#records, this.#monitor.port([record]), record, stage, add);
      // The alarm, soon, reconfigures them (a tick now would wait for this call's own lock).
      if (missed.length > 0) await this.#monitor.arm(Date.now());
      return missed;
    });
  }

  /** How many results the dataflow has emitted so far (where a new stage starts; null: a primary did not answer). */
  async resultsSoFar(): Promise<number | null> {
    const record = this.#record();
    return record ? resultsSoFar(this.#monitor.port([record]), record) : 0;
  }

  /**
   * Deletes the dataflow: routers stop using it at once; its replicas drop their state (the
   * alarm retries any that do not answer). @returns the replicas still to confirm.
   */
  async delete(): Promise<{ pending: string[] }> {
    return this.#exclusive(async () => {
      const record = this.#record();
      if (!record) return { pending: [] };
      record.deleting = true;
      this.#records.put(record);
      const pending = await finishDeletion(this.env, this.#records, record, this.#config.replicaTimeoutMs);
      if (pending.length > 0) await this.#monitor.arm(Date.now() + this.#config.heartbeatMs);
      return { pending };
    });
  }

  /** Takes over what the registry held for this dataflow before the upgrade (idempotent). */
  async adopt(id: string, state: AdoptedState): Promise<void> {
    await this.#exclusive(async () => {
      this.#kv.put("known", true);
      if (adoptState(this.#records, id, state)) await this.#monitor.arm(Date.now());
    });
  }

  /** A router saw a call to `replica` fail or time out: probe now instead of at the next due time. */
  async reportFailure(replica?: string): Promise<void> {
    await this.#monitor.report(replica ?? null);
  }

  /**
   * A router's call to `replica` is still unanswered after `FLUX_SUSPECT_MS`: probe now, and
   * answer once the replica was replaced or has answered a probe sent since (or at the
   * router's call timeout), so the router stops waiting on a replica that was failed over.
   */
  async reportSuspect(replica: string): Promise<SuspectVerdict> {
    return this.#monitor.suspect(replica);
  }

  override async alarm(): Promise<void> {
    await this.#monitor.alarm();
  }

  /** The one record this monitor holds (null: none, or deleted). */
  #record(): DataflowRecord | null {
    return this.#records.list()[0] ?? null;
  }

  #exclusive<T>(run: () => Promise<T>): Promise<T> {
    const next = this.#lock.then(run, run);
    this.#lock = next.catch(() => undefined);
    return next;
  }
}
