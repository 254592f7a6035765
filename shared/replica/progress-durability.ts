/**
 * Which progress a step must make durable (issue 12: fewer rows per event). Both storage
 * adapters (SQLite and the simulator's memory) store `durableMeta(...)`, so a simulated
 * crash loses exactly what a real one does. Invariant: the stored `lsn`, `appliedLsn` and
 * `standbyAckLsn` are never above the true values, and every other field is exact.
 */
import { ReplicaMetaSchema, type ReplicaMeta } from "../wire/persisted.ts";
import type { ReplicaEffects } from "./replica-state.ts";

/**
 * Progress fields a step may leave stale in storage: `lsn` is derived on load from the log
 * rows (written in the same step), and entries above a stale `appliedLsn` are replayed on
 * load (`restoreReplicaState`): applied at once, or pending until the standby confirms them
 * again on a primary with a standby. A stale `standbyAckLsn` only delays trims and answers.
 */
const LAGGING_FIELDS = ["lsn", "appliedLsn", "standbyAckLsn"] as const satisfies readonly (keyof ReplicaMeta)[];

const LAGGING = new Set<keyof ReplicaMeta>(LAGGING_FIELDS);

/** Every other field of the meta, listed once (each step compares them). */
const EXACT_FIELDS = (Object.keys(ReplicaMetaSchema.shape) as (keyof ReplicaMeta)[]).filter((field) => !LAGGING.has(field));

/**
 * The meta as storage must hold it after a step that ends in `next` with `effects`:
 * `next` itself when the replica is new, the step emitted outputs (`outputSeq` must match
 * the stored outputs), took a checkpoint, trimmed the log, or changed any field other than
 * the lagging ones (configuration, identity, checkpoint and output counters); otherwise
 * `next` with the lagging fields as `stored` has them, which is `stored` itself (returned
 * as is, so the usual step allocates nothing: callers never mutate it), and the progress
 * row is not rewritten. Never returns `next` by reference: steps mutate their meta in place.
 * @param stored the meta as storage holds it now (null: nothing stored).
 */
export function durableMeta(stored: ReplicaMeta | null, next: ReplicaMeta, effects: ReplicaEffects): ReplicaMeta {
  if (stored === null || mustPersistProgress(stored, next, effects)) return { ...next };
  // Every field but the lagging ones equals the stored one (mustPersistProgress), and those are kept as stored.
  return stored;
}

/** Whether a step's progress must be stored exactly (see {@link durableMeta}). */
function mustPersistProgress(stored: ReplicaMeta, next: ReplicaMeta, effects: ReplicaEffects): boolean {
  if (effects.outputs.length > 0 || effects.checkpoint !== undefined || effects.trimLogThrough !== undefined) return true;
  for (const field of EXACT_FIELDS) {
    const a = stored[field];
    const b = next[field];
    // The spec is an object: usually the same one, compared by value only when not.
    if (a !== b && (typeof a !== "object" || typeof b !== "object" || JSON.stringify(a) !== JSON.stringify(b))) return true;
  }
  // A lagging field moving down (a new standby's acknowledged LSN restarts at 0) must be stored.
  return LAGGING_FIELDS.some((field) => next[field] < stored[field]);
}
