/**
 * The contract between the runtime and operator code (DESIGN.md §3, STYLE.md §1).
 * Operators are deterministic state machines: same state and records in, same state
 * and outputs out. They know nothing about logs, replicas or failures: the runtime
 * logs every batch, replicates it, checkpoints the operator's state with `snapshot`,
 * rebuilds it with `restore` and replays the log after a crash or a fail-over, so an
 * operator that follows these rules gets exactly-once results for free.
 *
 * Rules for an operator:
 * - `S` is a plain JSON value (no Maps, classes, `undefined` or non-finite numbers), or
 *   `snapshot` turns it into one that `restore` takes back (the built-in aggregates keep
 *   columns; issue 12).
 * - No clocks, randomness or I/O: time is only what records and ticks carry.
 * - Outputs depend only on the records and ticks seen, in order — not on how they were
 *   split into batches.
 * - Keys of objects built from user strings need a prefix (e.g. `$`) so `__proto__` is safe.
 */
import type { FluxRecord, ResultPosition, WindowResult } from "../wire/window-result.ts";
import type { SliceCursor, SplitState, StateSlicing } from "./state-slices.ts";

/** A field each record carries after key and time: numbers are finite and within ±1e15; strings also accept numbers (as their decimal text). */
export interface RecordField {
  name: string;
  type: "number" | "string";
}

/** Receives the outputs an operator produces while it processes a batch. */
export type Emit<Out> = (output: Out) => void;

/**
 * Which results a query wants: one key or all, windows overlapping [fromMs, toMs), and
 * for paging, only those after a (window start, key) position, at most `limit` of them.
 */
export interface ResultFilter {
  key?: string | undefined;
  fromMs?: number | undefined;
  toMs?: number | undefined;
  after?: ResultPosition | undefined;
  limit?: number | undefined;
}

/**
 * A stateful operator. Records are `[key, timeMs, ...values]`, the values in the order
 * of the fields the operator declared. Outputs are window results: they are numbered,
 * stored, served by the results API and streamed to subscribers once emitted, so emit
 * a result only when it is final (`closed: true`).
 */
export interface Operator<S> {
  /** The empty state of a fresh partition. */
  init(): S;
  /**
   * Applies a whole batch, in order, emitting final results. May mutate and return `state`.
   * `closeLimit`: the most (window, key) results this call may close (none given: all that
   * are due); the rest stay due, in order, for the next calls (`closing`; issue 12).
   */
  process(state: S, records: readonly FluxRecord[], out: Emit<WindowResult>, closeLimit?: number): S;
  /**
   * A clock tick from the log (only for dataflows with `idleAdvanceMs`): event time is at
   * least `timeMs` now, even if no record says so. Close what that makes final (at most `closeLimit`).
   */
  tick?(state: S, timeMs: number, out: Emit<WindowResult>, closeLimit?: number): S;
  /** Whether results are due that a `closeLimit` held back (absent: never). */
  closing?(state: S): boolean;
  /** The JSON value a checkpoint stores; defaults to the state itself. */
  snapshot?(state: S): unknown;
  /** Rebuilds a state from `snapshot`'s value; throws if it is malformed. */
  restore(snapshot: unknown): S;
  /** Results not final yet (open windows) matching `filter`, in (window start, key) order. */
  openResults?(state: S, filter: ResultFilter): WindowResult[];
  /** Records dropped because they arrived after their window closed (shown on the status page). */
  lateRecords?(state: S): number;
  /**
   * The (window, key) entries the open windows hold: the size of the keyed state, shown per
   * replica on the status page (issue 28: the load a partition carries). Absent: not known.
   */
  openEntries?(state: S): number;
  /**
   * The operator's watermark, ms: every window ending at or before it is closed (its
   * results emitted, or due while `closing`), so no later result has `windowEndMs` at or
   * below it; null before any record or tick. Typically event time (the highest record time
   * or tick seen) minus allowed lateness. A stage reading this dataflow's results (issue 27)
   * needs it: without it no watermark reaches the stage, whose windows then never close.
   */
  watermarkMs?(state: S): number | null;
  /** Checkpoints the state in slices (see `state-slices.ts`); without it, the whole snapshot is one slice. */
  slicing?: StateSlicing<S>;
  /** Moves keys' state to another partition (issue 28); without it, the dataflow's key groups cannot move. */
  moves?: KeyMoves<S>;
}

/**
 * How an operator hands keys' state to another partition and takes it in (issue 28: key
 * groups move between replica pairs). Both are deterministic, like every other call.
 */
export interface KeyMoves<S> {
  /**
   * Takes the state of the keys for which `belongs` holds out of `state`: the state left,
   * and a JSON value `adopt` takes back. Results already due stay (they close here).
   */
  take(state: S, belongs: (key: string) => boolean): { state: S; taken: unknown };
  /**
   * Adds what another partition's `take` gave; emits at once the results it makes due.
   * @throws Error when `taken` is malformed or holds a key `state` holds.
   */
  adopt(state: S, taken: unknown, out: Emit<WindowResult>): S;
}

/** An operator bound to its state, as the replica runtime holds it (the state type erased). */
export interface LiveOperator {
  process(records: readonly FluxRecord[], out: Emit<WindowResult>, closeLimit?: number): void;
  tick(timeMs: number, out: Emit<WindowResult>, closeLimit?: number): void;
  /** Whether results are due that a `closeLimit` held back: the next calls close them. */
  closing(): boolean;
  /** The JSON value to checkpoint; serialize it before the next call mutates it. */
  snapshot(): unknown;
  /** The state as a head and slices of at most `perSlice` entries; serialize them before the next call mutates it. */
  split(perSlice: number): SplitState;
  /**
   * A cursor writing the state as of now slice by slice while later calls mutate it, or
   * null when the operator cannot (then `split`). Closed, and `aborted` set, if the
   * operator ever returns a new state object while it is open.
   */
  cursor(perSlice: number): (SliceCursor & { readonly aborted: boolean }) | null;
  openResults(filter: ResultFilter): WindowResult[];
  lateRecords(): number;
  /** See {@link Operator.openEntries}; null when the operator does not say. */
  openEntries(): number | null;
  /** See {@link Operator.watermarkMs}; null when the operator does not say. */
  watermarkMs(): number | null;
  /** Whether keys' state can move to another partition ({@link Operator.moves}). */
  readonly movable: boolean;
  /** See {@link KeyMoves.take}; returns what was taken. @throws Error when not `movable`. */
  take(belongs: (key: string) => boolean): unknown;
  /** See {@link KeyMoves.adopt}. @throws Error when not `movable`, or `taken` is malformed. */
  adopt(taken: unknown, out: Emit<WindowResult>): void;
}

/** Binds `operator` to a fresh state, or to the state restored from a checkpoint's `snapshot`. */
export function bindOperator<S>(operator: Operator<S>, snapshot?: unknown): LiveOperator {
  return bindState(operator, snapshot === undefined ? operator.init() : operator.restore(snapshot));
}

/** Rebuilds an operator's state slice by slice, then binds it. */
export interface SliceRestore {
  /** Adds one slice; throws if it is malformed. */
  add(slice: unknown): void;
  /** The operator bound to the state rebuilt so far. */
  finish(): LiveOperator;
}

/** Starts rebuilding `operator`'s state from a checkpoint's head (see `state-slices.ts`). */
export function restoreSliced<S>(operator: Operator<S>, head: unknown, sliced: boolean): SliceRestore {
  const state = stateFromHead(operator, head, sliced);
  return { add: (slice) => addSliceTo(operator, state, slice), finish: () => bindState(operator, state) };
}

function bindState<S>(operator: Operator<S>, initial: S): LiveOperator {
  let state = initial;
  let open: { cursor: SliceCursor; aborted: boolean } | null = null;
  const become = (next: S): void => {
    // Copy-on-write follows the state object: a new one leaves the cursor blind.
    if (next !== state && open) {
      open.aborted = true;
      open.cursor.close();
      open = null;
    }
    state = next;
  };
  return {
    process(records, out, closeLimit) {
      become(operator.process(state, records, out, closeLimit));
    },
    tick(timeMs, out, closeLimit) {
      if (operator.tick) become(operator.tick(state, timeMs, out, closeLimit));
    },
    closing: () => operator.closing?.(state) ?? false,
    cursor(perSlice) {
      const cursor = openCursor(operator, state, perSlice);
      if (!cursor) return null;
      const handle = { cursor, aborted: false };
      open = handle;
      return {
        head: cursor.head,
        slices: cursor.slices,
        next: () => cursor.next(),
        close: () => cursor.close(),
        get aborted() {
          return handle.aborted;
        },
      };
    },
    snapshot: () => (operator.snapshot ? operator.snapshot(state) : state),
    split: (perSlice) => splitState(operator, state, perSlice),
    openResults: (filter) => operator.openResults?.(state, filter) ?? [],
    lateRecords: () => operator.lateRecords?.(state) ?? 0,
    openEntries: () => operator.openEntries?.(state) ?? null,
    watermarkMs: () => operator.watermarkMs?.(state) ?? null,
    movable: operator.moves !== undefined,
    take(belongs) {
      const moved = movesOf(operator).take(state, belongs);
      become(moved.state);
      return moved.taken;
    },
    adopt(taken, out) {
      become(movesOf(operator).adopt(state, taken, out));
    },
  };
}

/** @throws Error for an operator whose keys cannot move. */
function movesOf<S>(operator: Operator<S>): KeyMoves<S> {
  if (!operator.moves) throw new Error("this operator cannot move keys' state between partitions");
  return operator.moves;
}

/** The head and slices of an operator's state (no `slicing`: the whole snapshot as head). */
function splitState<S>(operator: Operator<S>, state: S, perSlice: number): SplitState {
  if (operator.slicing) return { ...operator.slicing.split(state, perSlice), sliced: true };
  return { head: operator.snapshot ? operator.snapshot(state) : state, slices: [], sliced: false };
}

/** A cursor over the state as of now (see {@link StateSlicing.cursor}), or null when the operator has none. */
function openCursor<S>(operator: Operator<S>, state: S, perSlice: number): SliceCursor | null {
  return operator.slicing?.cursor?.(state, perSlice) ?? null;
}

/** A state rebuilt from a head (`sliced: false`: the whole snapshot, restored with `restore`), to which `addSlice` adds slices. */
function stateFromHead<S>(operator: Operator<S>, head: unknown, sliced: boolean): S {
  if (!sliced) return operator.restore(head);
  if (!operator.slicing) throw new Error("checkpoint has slices, but the operator does not slice its state");
  return operator.slicing.fromHead(head);
}

/** Adds a slice to a state rebuilt by {@link stateFromHead}. */
function addSliceTo<S>(operator: Operator<S>, state: S, slice: unknown): void {
  if (!operator.slicing) throw new Error("checkpoint has slices, but the operator does not slice its state");
  operator.slicing.addSlice(state, slice);
}
