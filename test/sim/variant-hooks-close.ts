/**
 * Broken variants of closes spread over steps (issue 12, `shared/closing/`), injected
 * around a replica's storage, its state or its own later steps like the others
 * (`variant-hooks.ts`).
 */
import { compileDataflow } from "../../shared/operators/compile.ts";
import type { LiveOperator } from "../../shared/operators/operator.ts";
import type { ReplicaHost } from "../../shared/replica/replica-host.ts";
import type { DataflowSpec } from "../../shared/wire/dataflow-spec.ts";
import type { MemoryReplicaStorage } from "../helpers/memory-replica-storage.ts";

const CLOSED_THROUGH = /,"closedThrough":\{"windowStartMs":[^,]+,"key":"(?:[^"\\]|\\.)*"\}/;

/** close-progress-not-checkpointed: checkpoints leave `closedThrough` out of their head, as if no close were under way. */
export function dropClosedThrough(storage: MemoryReplicaStorage): void {
  const persist = storage.persist.bind(storage);
  const strip = (pieces: string[]) => pieces.map((piece, i) => (i === 0 ? piece.replace(CLOSED_THROUGH, "") : piece));
  storage.persist = (meta, effects) => {
    const { checkpoint, checkpointStage: stage } = effects;
    persist(meta, {
      ...effects,
      ...(checkpoint ? { checkpoint: { ...checkpoint, pieces: strip(checkpoint.pieces) } } : {}),
      ...(stage?.begin ? { checkpointStage: { ...stage, pieces: strip(stage.pieces) } } : {}),
    });
  };
}

/**
 * closed-keys-open: open results ignore how far a spread close has gone, so the keys it
 * has already emitted are served again as open (the real operator, restored from the
 * state's snapshot without `closedThrough`).
 */
export function closedKeysOpen(live: LiveOperator, spec: DataflowSpec): LiveOperator {
  return {
    ...live,
    openResults: (filter) => {
      const snapshot = live.snapshot() as Record<string, unknown>;
      if (snapshot.closedThrough === undefined) return live.openResults(filter);
      const { closedThrough: _dropped, ...rest } = snapshot;
      return compileDataflow(spec).bind(rest).openResults(filter);
    },
  };
}

/**
 * close-entry-unreplicated: the primary applies the close entry it logs itself at once,
 * as if it had no standby, instead of forwarding it and waiting for the standby to hold it.
 */
export function applyCloseAtOnce<T>(host: ReplicaHost, step: () => T): T {
  const meta = host.load()?.meta;
  if (!meta?.hasStandby) return step();
  meta.hasStandby = false;
  try {
    return step();
  } finally {
    meta.hasStandby = true;
  }
}
