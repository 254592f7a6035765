/**
 * The contract between the runtime and operator code (DESIGN.md §3, STYLE.md §1).
 * Operators are deterministic state machines: same state and records in, same state
 * and outputs out. They know nothing about logs, replicas or failures.
 */

/** Receives the outputs an operator produces while it processes a batch. */
export type Emit<Out> = (output: Out) => void;

/**
 * A stateful operator. `S` must be a plain JSON value: the runtime snapshots it with
 * `JSON.stringify` and restores it with `JSON.parse`, so no Maps, classes or `undefined`.
 * `process` may mutate and return the state it is given (the hot path avoids copies).
 */
export interface Operator<In, Out, S> {
  /** The empty state of a fresh partition. */
  init(): S;
  /** Applies a whole batch, in order, emitting results (for example closed windows). */
  process(state: S, records: readonly In[], out: Emit<Out>): S;
}
