/**
 * A fresh replica's seed in memory (issue 12): each chunk the monitor copies is staged
 * durably and, when it is the next one, its completed piece parsed and restored at once,
 * so no seed call does more than one slice's work. Only chunks taken in order from chunk
 * 0 build the state; anything else (a gap, a restart in between, a format-1 snapshot)
 * leaves no builder, and `finishSeed` restores from the staged rows instead.
 */
import type { DataflowSpec } from "../wire/dataflow-spec.ts";
import { CheckpointBuilder } from "./checkpoint-pieces.ts";
import { isPieceFormat } from "./checkpoint-rows.ts";

/** What a fresh replica has restored of the snapshot it is being seeded with. */
export interface SeedProgress {
  snapshotId: string;
  /** The next chunk index the builder expects. */
  next: number;
  /** The state rebuilt from chunks `0..next-1`, or null when it must come from the staged rows. */
  builder: CheckpointBuilder | null;
}

/** The progress after chunk `index` of `snapshotId` was staged. */
export function progressAfterChunk(progress: SeedProgress | null, spec: DataflowSpec, snapshotId: string, index: number, row: string): SeedProgress {
  if (index === 0) {
    // Chunk 0 always starts over: a seed begun again sends it first.
    const fresh: SeedProgress = { snapshotId, next: 0, builder: isPieceFormat(row) ? new CheckpointBuilder(spec) : null };
    return take(fresh, row);
  }
  if (!progress || progress.snapshotId !== snapshotId) return { snapshotId, next: index + 1, builder: null };
  // A chunk sent again (its reply was lost): the same snapshot's chunk, already taken.
  if (index < progress.next) return progress;
  if (index > progress.next) return { snapshotId, next: index + 1, builder: null };
  return take(progress, row);
}

function take(progress: SeedProgress, row: string): SeedProgress {
  progress.next += 1;
  try {
    progress.builder?.push(row);
  } catch {
    // Malformed: restoring from the staged rows at the end reports it.
    progress.builder = null;
  }
  return progress;
}
