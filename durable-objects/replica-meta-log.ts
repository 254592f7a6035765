/**
 * A replica's meta parts in SQLite (issue 12: rows are most of the cost). A step rewrites a
 * meta part only when `durableMeta` (shared/replica/progress-durability.ts) says its stored
 * form changed, with an UPDATE (1 row written; INSERT OR REPLACE on the text key costs 2).
 * The part named `LOG_PART` is the log's own (`replica-log.ts`) and not part of the meta.
 */
import { META_PARTS, ReplicaMetaSchema, type MetaPart, type ReplicaMeta } from "../shared/wire/persisted.ts";
import type { ReplicaEffects } from "../shared/replica/replica-state.ts";
import { durableMeta } from "../shared/replica/progress-durability.ts";
import type { CountedSql } from "../platform/counted-sql.ts";
import { LOG_PART, partBody } from "./replica-layout.ts";

const PARTS = Object.keys(META_PARTS) as MetaPart[];

/** The meta as storage will hold it after a step, and the parts whose values changed (`body` null: the stored row is already so). */
export interface MetaPlan {
  durable: ReplicaMeta;
  parts: Array<{ part: MetaPart; values: readonly unknown[]; body: string | null }>;
}

export class ReplicaMetaLog {
  readonly #sql: CountedSql;
  /** The meta as stored, and each part's stored row (null / empty: unknown, write every part). */
  #stored: ReplicaMeta | null = null;
  readonly #written = new Map<MetaPart, string>();
  /** Each part's field values when its row was last written: unchanged values (===) skip serializing it. */
  readonly #values = new Map<MetaPart, readonly unknown[]>();

  constructor(sql: CountedSql) {
    this.#sql = sql;
  }

  /** The stored meta (its LSNs possibly behind: see `durableMeta`), or null for a replica never initialised. */
  loadMeta(): ReplicaMeta | null {
    this.forget();
    const rows = this.#sql.all<{ part: string; body: string }>("SELECT part, body FROM meta_parts");
    if (rows.length === 0) return null;
    const merged: Record<string, unknown> = {};
    for (const row of rows) if (row.part !== LOG_PART) Object.assign(merged, JSON.parse(row.body));
    const meta = ReplicaMetaSchema.parse(merged);
    for (const row of rows) if (PARTS.includes(row.part as MetaPart)) this.#written.set(row.part as MetaPart, row.body);
    this.#stored = { ...meta };
    return meta;
  }

  /**
   * The meta parts a step changed in storage's terms, to pass to {@link writeMeta}
   * (none: the step need not touch the meta). Writes nothing.
   */
  planMeta(meta: ReplicaMeta, effects: ReplicaEffects): MetaPlan {
    const durable = durableMeta(this.#stored, meta, effects);
    // The meta as stored is what storage must hold: no part changed.
    if (durable === this.#stored) return { durable, parts: [] };
    const parts: MetaPlan["parts"] = [];
    for (const part of PARTS) {
      const values = META_PARTS[part].map((field) => durable[field]);
      const last = this.#values.get(part);
      if (last?.every((value, i) => value === values[i])) continue;
      const body = partBody(durable, part);
      parts.push({ part, values, body: this.#written.get(part) === body ? null : body });
    }
    return { durable, parts };
  }

  /** Writes a plan of {@link planMeta} (inside the step's transaction, if it writes a part). */
  writeMeta({ durable, parts }: MetaPlan): void {
    for (const { part, values, body } of parts) {
      this.#values.set(part, values);
      if (body === null) continue;
      if (this.#written.has(part)) this.#sql.run("UPDATE meta_parts SET body = ? WHERE part = ?", body, part);
      else this.#sql.run("INSERT OR REPLACE INTO meta_parts (part, body) VALUES (?, ?)", part, body);
      this.#written.set(part, body);
    }
    this.#stored = durable;
  }

  /** What is stored is no longer known (a rolled-back transaction, a wipe): the next write rewrites every part. */
  forget(): void {
    this.#stored = null;
    this.#written.clear();
    this.#values.clear();
  }
}
