/**
 * Broken variants of checkpoints spread over steps (issue 12, `shared/replica/checkpoint-steps.ts`),
 * injected around a replica's storage or its calls like the others (`variant-hooks.ts`).
 */
import type { ReplicaHost } from "../../shared/replica/replica-host.ts";
import type { Replicate, ReplicateReply, Write, WriteReply } from "../../shared/wire/replica-rpc.ts";
import type { MemoryReplicaStorage } from "../helpers/memory-replica-storage.ts";

/**
 * checkpoint-current-values: a spread checkpoint writes each slice after the first from
 * the state as it is when the slice is written, not as of the checkpoint's LSN (no
 * copy-on-write), so entries between that LSN and the slice are in the checkpoint and
 * are applied again from the log after a restart.
 */
function currentValues(host: ReplicaHost): void {
  const spread = host.load()?.spread;
  if (!spread || Object.hasOwn(spread.cursor, "currentValues")) return;
  const cursor = spread.cursor;
  const operator = host.load()?.operator;
  if (!operator) return;
  // The simulator's tuning: one (window, key) entry per slice.
  const perSlice = 1;
  spread.cursor = {
    currentValues: true,
    head: cursor.head,
    slices: cursor.slices,
    next: () => {
      const slices = operator.split(perSlice).slices;
      const slice = slices[spread.written];
      return slice ?? cursor.next();
    },
    close: () => cursor.close(),
    get aborted() {
      return cursor.aborted;
    },
  } as typeof cursor;
}

export const writeCurrentValues = (host: ReplicaHost, msg: Write, run: (msg: Write) => Promise<WriteReply>): Promise<WriteReply> => {
  const reply = run(msg);
  currentValues(host);
  return reply;
};

export const replicateCurrentValues = (host: ReplicaHost, msg: Replicate, run: (msg: Replicate) => ReplicateReply): ReplicateReply => {
  const reply = run(msg);
  currentValues(host);
  return reply;
};

/**
 * trim-before-checkpoint-complete: the log is trimmed through a spread checkpoint's LSN
 * as soon as it begins, while the stored checkpoint is still the previous one: a restart
 * before the last slice finds the log behind it gone.
 */
export function trimAtCheckpointBegin(storage: MemoryReplicaStorage): void {
  const persist = storage.persist.bind(storage);
  storage.persist = (meta, effects) => {
    const stage = effects.checkpointStage;
    persist(meta, stage?.begin && !stage.complete ? { ...effects, trimLogThrough: Math.max(effects.trimLogThrough ?? 0, stage.lsn) } : effects);
  };
}
