/**
 * Operator state in slices (issue 12): a small head plus slices that each parse and
 * restore on their own, so a fresh replica rebuilds a large state one slice per seed
 * call instead of in one long step (DESIGN.md §4). An operator without `slicing` is
 * checkpointed as one head holding its whole snapshot, restored with `restore`. Only the
 * types live here; `operator.ts` splits and rebuilds a bound operator's state with them.
 */

/** How an operator splits its state into a head and slices, and rebuilds it from them. */
export interface StateSlicing<S> {
  /**
   * The state as a head (a JSON value that may share objects with the state: serialize it
   * before the next call mutates it) and the JSON texts of slices of at most `perSlice`
   * entries each.
   */
  split(state: S, perSlice: number): { head: unknown; slices: string[] };
  /** A state holding only what the head holds; throws if the head is malformed. */
  fromHead(head: unknown): S;
  /** Adds one slice's entries to `state`; throws (leaving `state` unusable) if the slice is malformed. */
  addSlice(state: S, slice: unknown): void;
  /**
   * Opens a cursor that writes the state as of now in slices, one per call, while later
   * steps go on mutating it (copy-on-write: `keyed-window-cursor.ts`). Without it, a
   * checkpoint is split in one step.
   */
  cursor?(state: S, perSlice: number): SliceCursor;
}

/** A checkpoint of a state as of the moment it was opened, written slice by slice. */
export interface SliceCursor {
  /** The head, as `split` would give it at the opening. */
  readonly head: unknown;
  /** How many slices `next` gives in all. */
  readonly slices: number;
  /** The JSON text of the next slice, or null past the last. */
  next(): string | null;
  /** Stops keeping preimages; the cursor is unusable after it. */
  close(): void;
}

/** A state split for a checkpoint; `sliced: false` when the head is the whole snapshot (the operator has no `slicing`). */
export interface SplitState {
  head: unknown;
  /** JSON texts. */
  slices: string[];
  sliced: boolean;
}
