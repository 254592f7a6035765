/**
 * Turns a dataflow spec into what the runtime needs: the fields the router puts in each
 * record, and the operator the replicas run (the built-in window aggregates, or a
 * registered custom operator).
 */
import type { DataflowSpec } from "../wire/dataflow-spec.ts";
import { bindOperator, restoreSliced, type LiveOperator, type RecordField, type SliceRestore } from "./operator.ts";
import { findOperator } from "./registry.ts";
import { windowAggregate, windowRecordFields } from "./window-aggregate.ts";
import { windowJoin } from "./join/window-join.ts";

/** A compiled dataflow. */
export interface CompiledDataflow {
  /** Record layout: `[key, timeMs, ...values of these fields]`. */
  fields: RecordField[];
  /** The longest window any result spans, ms. */
  maxWindowMs: number;
  /** A live operator, fresh or restored from a checkpoint's operator snapshot. */
  bind(snapshot?: unknown): LiveOperator;
  /** Starts rebuilding a live operator from a sliced checkpoint's head. */
  restoreSliced(head: unknown, sliced: boolean): SliceRestore;
}

/** Compiles a validated spec; throws if it names an operator that is no longer registered. */
export function compileDataflow(spec: DataflowSpec): CompiledDataflow {
  if (spec.operator) {
    const registered = findOperator(spec.operator.name);
    if (!registered) throw new Error(`operator '${spec.operator.name}' is not registered`);
    return registered.compile(spec.operator.params);
  }
  if (spec.join) {
    const join = windowJoin(spec);
    // Records of a join carry a side marker and that side's fields (`join-sides.ts`): no one layout for both.
    return { fields: [], maxWindowMs: spec.window?.sizeMs ?? 0, bind: (snapshot) => bindOperator(join, snapshot), restoreSliced: (head, sliced) => restoreSliced(join, head, sliced) };
  }
  const operator = windowAggregate(spec, spec.from !== undefined);
  return { fields: windowRecordFields(spec.aggregates ?? {}), maxWindowMs: spec.window?.sizeMs ?? 0, bind: (snapshot) => bindOperator(operator, snapshot), restoreSliced: (head, sliced) => restoreSliced(operator, head, sliced) };
}

/** The record fields of a spec (what the router extracts from each event). */
export function recordFieldsOf(spec: DataflowSpec): RecordField[] {
  if (spec.operator) return compileDataflow(spec).fields;
  return windowRecordFields(spec.aggregates ?? {});
}
