/**
 * Operator state in slices (issue 12): a small head plus slices that each parse and
 * restore on their own, so a fresh replica rebuilds a large state one slice per seed
 * call instead of in one long step (DESIGN.md §4). An operator without `slicing` is
 * checkpointed as one head holding its whole snapshot, restored with `restore`.
 */
import type { Operator } from "./operator.ts";

/** How an operator splits its state into a head and slices, and rebuilds it from them. */
export interface StateSlicing<S> {
  /**
   * The state as a head and slices of at most `perSlice` entries each, as JSON values
   * that may share objects with the state: serialize them before the next call mutates it.
   */
  split(state: S, perSlice: number): { head: unknown; slices: unknown[] };
  /** A state holding only what the head holds; throws if the head is malformed. */
  fromHead(head: unknown): S;
  /** Adds one slice's entries to `state`; throws (leaving `state` unusable) if the slice is malformed. */
  addSlice(state: S, slice: unknown): void;
}

/** A state split for a checkpoint; `sliced: false` when the head is the whole snapshot (the operator has no `slicing`). */
export interface SplitState {
  head: unknown;
  slices: unknown[];
  sliced: boolean;
}

/** The head and slices of an operator's state (no `slicing`: the whole snapshot as head). */
export function splitState<S>(operator: Operator<S>, state: S, perSlice: number): SplitState {
  if (operator.slicing) return { ...operator.slicing.split(state, perSlice), sliced: true };
  return { head: operator.snapshot ? operator.snapshot(state) : state, slices: [], sliced: false };
}

/** A state rebuilt from a head (`sliced: false`: the whole snapshot, restored with `restore`), to which `addSlice` adds slices. */
export function stateFromHead<S>(operator: Operator<S>, head: unknown, sliced: boolean): S {
  if (!sliced) return operator.restore(head);
  if (!operator.slicing) throw new Error("checkpoint has slices, but the operator does not slice its state");
  return operator.slicing.fromHead(head);
}

/** Adds a slice to a state rebuilt by {@link stateFromHead}. */
export function addSliceTo<S>(operator: Operator<S>, state: S, slice: unknown): void {
  if (!operator.slicing) throw new Error("checkpoint has slices, but the operator does not slice its state");
  operator.slicing.addSlice(state, slice);
}
