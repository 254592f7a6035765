/**
 * Custom operators by name (DESIGN.md §3). A dataflow spec selects one with
 * `"operator": { "name": ..., "params": {...} }`. To add your own, write it against
 * `Operator` (see `heavy-hitters.ts` and `docs/OPERATORS.md`) and list it here.
 */
import type { RegisteredOperator } from "./define-operator.ts";
import { heavyHitters } from "./custom/heavy-hitters.ts";

const OPERATORS: Readonly<Record<string, RegisteredOperator>> = {
  "heavy-hitters": heavyHitters,
};

/** The operator registered under `name`, if any. */
export function findOperator(name: string): RegisteredOperator | undefined {
  return Object.hasOwn(OPERATORS, name) ? OPERATORS[name] : undefined;
}

/** Registered names, sorted. */
export function operatorNames(): string[] {
  return Object.keys(OPERATORS).sort();
}
