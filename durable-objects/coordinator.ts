/**
 * The registry (issue 29), still named "coordinator": an entry per dataflow, the declared
 * stream schemas and the revoked token ids. It runs creation and deletion (each dataflow's
 * own monitor holds its routing and watches its replicas: `dataflow-monitor.ts`) and writes
 * each stream's directory for routers (`stream-directory.ts`). Only creating, deleting and
 * listing dataflows and streams, and the routers' revocation refresh, reach it: no ingest,
 * read or probe path does.
 */
import { DurableObject } from "cloudflare:workers";
import type { DataflowSpec } from "../shared/wire/dataflow-spec.ts";
import type { RegistryEntry } from "../shared/wire/registry.ts";
import type { StreamRecord, StreamSchema } from "../shared/wire/stream-schema.ts";
import type { Revocation } from "../shared/tokens/revocations.ts";
import { countedKv } from "../platform/counted-sql.ts";
import { directoryStub, monitorStub } from "../platform/object-calls.ts";
import { declareStream, listStreams, readStream, type PutStreamResult } from "./stream-store.ts";
import { revokedIds, revokeToken } from "./revocation-store.ts";
import { MonitorRecords } from "./monitor-records.ts";
import { RegistryEntries } from "./registry-entries.ts";
import { migrateOldLayout } from "./registry-migration.ts";
import { deleteDataflow, putDataflow, type DeleteDataflowResult, type PutDataflowResult, type RegistryContext } from "./registry-steps.ts";

export class Coordinator extends DurableObject<Env> {
  /** Storage with every key read and written counted (issue 12). */
  readonly #kv = countedKv(this.ctx.storage.kv);
  readonly #entries = new RegistryEntries(this.#kv);
  readonly #context: RegistryContext = {
    kv: this.#kv,
    entries: this.#entries,
    monitor: (id) => monitorStub(this.env, id),
    syncDirectory: async (stream) => {
      await directoryStub(this.env, stream).set(this.#entries.membersOf(stream), readStream(this.#kv, stream)?.schema ?? null);
    },
  };
  /** Serialises writers across their awaits. */
  #lock: Promise<unknown> = Promise.resolve();
  /** Set once this instance found nothing left of the old layout (`registry-migration.ts`). */
  #migrated = false;

  /**
   * Creates a dataflow, or confirms an identical one; a different spec under an existing
   * id is a conflict. Re-sending the same spec finishes a creation that was interrupted.
   */
  async putDataflow(id: string, spec: DataflowSpec): Promise<PutDataflowResult> {
    return this.#exclusive(async () => putDataflow(this.#context, id, spec));
  }

  /** Deletes a dataflow (see `deleteDataflow`). @returns the replicas still to confirm. */
  async deleteDataflow(id: string): Promise<DeleteDataflowResult> {
    return this.#exclusive(async () => deleteDataflow(this.#context, id));
  }

  /** A dataflow's monitor finished deleting it: drop its entry (unless it was created again since). */
  async forgetDataflow(id: string): Promise<void> {
    if (this.#entries.read(id)?.deleting) this.#entries.remove(id);
  }

  /** Every dataflow's entry, ids sorted (the Worker asks each one's monitor for its routing). */
  async listDataflows(): Promise<RegistryEntry[]> {
    await this.#exclusive(async () => undefined);
    return this.#entries.list();
  }

  /** Declares (or replaces) a stream's schema, unless a dataflow reading it would no longer fit; then its directory. */
  async putStream(name: string, schema: StreamSchema): Promise<PutStreamResult> {
    return this.#exclusive(async () => {
      const result = declareStream(this.#kv, name, schema, this.#entries.list());
      if (result.status !== "conflict") await this.#context.syncDirectory(name);
      return result;
    });
  }

  async getStream(name: string): Promise<StreamRecord | null> {
    return readStream(this.#kv, name);
  }

  async listStreams(): Promise<StreamRecord[]> {
    return listStreams(this.#kv);
  }

  /**
   * Moves what an older version stored here to the monitors and directories, if anything is
   * left (a router or reader found a stream or dataflow nobody wrote yet, and asks again after).
   */
  async migrate(): Promise<void> {
    await this.#exclusive(async () => undefined);
  }

  /** Revokes signed token `id` (issue 26); a repeat reports the first revocation. */
  async revokeToken(id: string): Promise<Revocation> {
    return revokeToken(this.#kv, id, Date.now());
  }

  /** The ids of revoked tokens that could still be unexpired (what routers cache). */
  async revokedTokens(): Promise<string[]> {
    return revokedIds(this.#kv, Date.now());
  }

  /** Only an older version armed it (its monitor): migrate, and arm nothing. */
  override async alarm(): Promise<void> {
    await this.#exclusive(async () => undefined);
  }

  /** Runs `run` after every earlier writer, and after the migration from the old layout. */
  #exclusive<T>(run: () => Promise<T>): Promise<T> {
    const migrated = async () => {
      if (!this.#migrated) {
        await migrateOldLayout(this.#context, new MonitorRecords(this.#kv));
        this.#migrated = true;
      }
      return run();
    };
    const next = this.#lock.then(migrated, migrated);
    this.#lock = next.catch(() => undefined);
    return next;
  }
}
