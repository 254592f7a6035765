/**
 * The coordinator: the single object holding dataflow specs and routing tables, and the
 * alarm-driven monitor (DESIGN.md §4, shell in `monitor-alarm.ts`): it probes the
 * replicas of every dataflow that is due (every heartbeat while active, rarely while
 * idle, at once on a router's report) and acts: takeover, degrade, recovery,
 * reconciliation, all decided in `shared/monitor`. It writes only what changed.
 */
import { DurableObject } from "cloudflare:workers";
import { parseFluxConfig, type FluxConfig } from "../shared/config.ts";
import { desiredConfigs } from "../shared/monitor/desired-config.ts";
import { isSameSpec, planDataflow } from "../shared/plan-dataflow.ts";
import type { DataflowSpec } from "../shared/wire/dataflow-spec.ts";
import type { StreamRouting } from "../shared/router/routing-cache.ts";
import type { DataflowRecord, HealthMap, SuspectVerdict } from "../shared/wire/routing.ts";
import { specProblems } from "../shared/dataflow-checks/stream-schema-fit.ts";
import type { SchemaProblem, StreamRecord, StreamSchema } from "../shared/wire/stream-schema.ts";
import { declareStream, listStreams, readStream, type PutStreamResult } from "./stream-store.ts";
import { revokedIds, revokeToken } from "./revocation-store.ts";
import type { Revocation } from "../shared/tokens/revocations.ts";
import { finishDeletion } from "./dataflow-deletion.ts";
import { MonitorAlarm } from "./monitor-alarm.ts";
import { MonitorRecords } from "./monitor-records.ts";
import { countedKv } from "../platform/counted-sql.ts";

/** Outcome of creating a dataflow. */
type PutDataflowResult =
  | { status: "created" | "unchanged" | "conflict" | "deleting"; record: DataflowRecord }
  | { status: "invalid"; problems: SchemaProblem[] };

export class Coordinator extends DurableObject<Env> {
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
  });
  /** Serialises writers (creation and monitor ticks) across their awaits. */
  #lock: Promise<unknown> = Promise.resolve();

  /**
   * Creates a dataflow, or confirms an identical one; a different spec under an existing
   * id is a conflict. Re-sending the same spec finishes a creation that was interrupted.
   */
  async putDataflow(id: string, spec: DataflowSpec): Promise<PutDataflowResult> {
    return this.#exclusive(async () => {
      // Validation before comparison (issue 26): a spec that does not fit its stream's
      // schema is invalid whether or not the id exists, deleting or with another spec.
      const declared = readStream(this.#kv, spec.stream);
      const problems = declared ? specProblems(declared.schema, spec) : [];
      if (problems.length > 0) return { status: "invalid", problems };
      const existing = this.#records.read(id);
      if (existing?.deleting) return { status: "deleting", record: existing };
      if (existing && !isSameSpec(existing.spec, spec)) return { status: "conflict", record: existing };
      const firstEpoch = this.#records.tombstone(id) + 1;
      const record = existing ?? planDataflow(id, spec, Date.now(), this.#config.locationHints, firstEpoch);
      if (!existing) this.#records.put(record);
      if (!record.ready) {
        const port = this.#monitor.port([record]);
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
        await this.#monitor.arm(Date.now() + this.#config.heartbeatMs);
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
    return this.#records.read(id);
  }

  async listDataflows(): Promise<DataflowRecord[]> {
    return this.#records.list();
  }

  /** Per replica, what the monitor last saw. */
  async health(id: string): Promise<HealthMap> {
    return this.#records.health(id);
  }

  /** A router saw a call to `replica` fail or time out: probe its dataflow now instead of at its next due time. */
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

  /** Revokes signed token `id` (issue 26); a repeat reports the first revocation. */
  async revokeToken(id: string): Promise<Revocation> {
    return revokeToken(this.#kv, id, Date.now());
  }

  /** The ids of revoked tokens that could still be unexpired (what routers cache). */
  async revokedTokens(): Promise<string[]> {
    return revokedIds(this.#kv, Date.now());
  }

  override async alarm(): Promise<void> {
    await this.#monitor.alarm();
  }

  #exclusive<T>(run: () => Promise<T>): Promise<T> {
    const next = this.#lock.then(run, run);
    this.#lock = next.catch(() => undefined);
    return next;
  }
}
