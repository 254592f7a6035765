/**
 * How a custom operator is packaged for the registry: a parameter schema (validated when
 * a dataflow is created, errors naming the bad parameter), the record fields it reads,
 * and a factory. See `docs/OPERATORS.md` for a walk-through.
 */
import type { z } from "zod";
import { bindOperator, restoreSliced, type LiveOperator, type Operator, type RecordField, type SliceRestore } from "./operator.ts";

/** What an operator's author writes. `P` is the parsed parameters, `S` the operator state. */
export interface OperatorDefinition<P, S> {
  /** One line for `GET /v1/operators`. */
  description: string;
  /** The `params` a dataflow passes; use `z.strictObject` so typos are refused. */
  params: z.ZodType<P>;
  /** The fields each record carries after key and time, in order. */
  fields(params: P): RecordField[];
  /** The longest window the operator's results span, ms (bounds range queries over stored results). */
  maxWindowMs(params: P): number;
  create(params: P): Operator<S>;
}

/** A definition with its types erased, as the registry holds it. */
export interface RegisteredOperator {
  description: string;
  params: z.ZodType<unknown>;
  /** Compiles already-validated parameters; throws if they do not parse. */
  compile(params: unknown): { fields: RecordField[]; maxWindowMs: number; bind(snapshot?: unknown): LiveOperator; restoreSliced(head: unknown, sliced: boolean): SliceRestore };
}

/** Packages a definition for the registry. */
export function defineOperator<P, S>(definition: OperatorDefinition<P, S>): RegisteredOperator {
  return {
    description: definition.description,
    params: definition.params,
    compile(raw) {
      const params = definition.params.parse(raw);
      const operator = definition.create(params);
      const bind = (snapshot?: unknown) => bindOperator(operator, snapshot);
      return { fields: definition.fields(params), maxWindowMs: definition.maxWindowMs(params), bind, restoreSliced: (head: unknown, sliced: boolean) => restoreSliced(operator, head, sliced) };
    },
  };
}
