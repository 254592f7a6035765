/**
 * The coordinator: the single object holding dataflow specs and routing tables, and the
 * alarm-driven monitor (DESIGN.md §4, shell in `monitor-alarm.ts`): it probes the
 * replicas of every dataflow that is due (every heartbeat while active, rarely while
 * idle, at once on a router's report) and acts: takeover, degrade, recovery,
 * reconciliation, all decided in `shared/monitor`. It writes only what changed.
 */
import { DurableObject } from "cloudflare:workers";
import { parseFluxConfig, type FluxConfig } from "../shared/config.ts";
import type { DataflowSpec } from "../shared/wire/dataflow-spec.ts";
import type { StreamRouting } from "../shared/router/routing-cache.ts";
import type { DataflowRecord, HealthMap, SuspectVerdict } from "../shared/wire/routing.ts";
import type { StreamRecord, StreamSchema } from "../shared/wire/stream-schema.ts";
import { declareStream, listStreams, readStream, type PutStreamResult } from "./stream-store.ts";
import { revokedIds, revokeToken } from "./revocation-store.ts";
import type { Revocation } from "../shared/tokens/revocations.ts";
import { finishDeletion } from "./dataflow-deletion.ts";
import { putDataflow, readersOf, type PutDataflowResult } from "./dataflow-creation.ts";
import { linkStage } from "./stage-links.ts";
import { MonitorAlarm } from "./monitor-alarm.ts";
import { MonitorRecords } from "./monitor-records.ts";
import { countedKv } from "../platform/counted-sql.ts";

/** Outcome of deleting a dataflow; `in-use`: stages read it (`readers`), so it stays. */
type DeleteDataflowResult =
  | { status: "not-found" }
  | { status: "in-use"; readers: string[] }
  | { status: "deleted" | "deleting"; stream: string | null; pending: string[] };

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
    const context = {
      kv: this.#kv,
      records: this.#records,
      config: this.#config,
      port: (records: DataflowRecord[]) => this.#monitor.port(records),
      report: (replica: string) => this.#monitor.report(replica),
      armMonitor: (atMs: number) => this.#monitor.arm(atMs),
    };
    return this.#exclusive(async () => putDataflow(context, id, spec));
  }

  /**
   * Deletes a dataflow: routers stop using it at once; its replicas drop their state (the
   * monitor retries any that do not answer). @returns the replicas still to confirm.
   */
  async deleteDataflow(id: string): Promise<DeleteDataflowResult> {
    return this.#exclusive(async () => {
      const record = this.#records.read(id);
      if (!record) return { status: "not-found" };
      // A stage reading it would lose its input for good (issue 27): delete the stages first.
      const readers = readersOf(this.#records, id);
      if (readers.length > 0) return { status: "in-use", readers: readers.map((r) => r.id) };
      record.deleting = true;
      this.#records.put(record);
      // Its upstreams stop delivering to it before its replicas go.
      await linkStage(this.#records, this.#monitor.port(this.#records.list()), record, false);
      const pending = await finishDeletion(this.env, this.#records, record, this.#config.replicaTimeoutMs);
      return { status: pending.length === 0 ? "deleted" : "deleting", stream: record.spec.stream ?? null, pending };
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

  /** The stages among `ids` that exist, are ready and are not being deleted: what an upstream primary delivers to (issue 27). */
  async readerRoutes(ids: string[]): Promise<DataflowRecord[]> {
    return ids.flatMap((id) => this.#records.read(id) ?? []).filter((r) => r.ready && !r.deleting);
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
