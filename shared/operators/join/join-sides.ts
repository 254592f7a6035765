/**
 * The two sides of a windowed join (issue 27): each side is a window aggregate over the
 * results of one of the two dataflows the join reads, with the join's key, window and
 * filter; its records carry a side marker after key and time (`[key, timeMs, side,
 * ...fields]`), so one partition's log holds both sides in the order they arrived.
 */
import type { AggregateSpec, DataflowSpec, JoinSpec } from "../../wire/dataflow-spec.ts";
import type { AggregateValue } from "../../wire/window-result.ts";

/** Which side of a join a record belongs to: the first dataflow of `from`, or the second. */
export type JoinSide = 0 | 1;

/** The spec one side aggregates with: the join's own, its aggregates those of the side, without `join`. */
export function sideSpec(spec: DataflowSpec, side: JoinSide): DataflowSpec {
  const join = spec.join;
  if (!join) throw new Error("not a join");
  const { join: _join, ...rest } = spec;
  return { ...rest, aggregates: side === 0 ? join.left : join.right };
}

/** What a side that had no results in a window reports: counts 0, sums 0, extremes and averages null, sketches empty. */
export function emptyValues(aggregates: JoinSpec["left"]): Record<string, AggregateValue> {
  const values: Record<string, AggregateValue> = {};
  for (const [name, aggregate] of Object.entries(aggregates)) values[name] = emptyValue(aggregate);
  return values;
}

function emptyValue(aggregate: AggregateSpec): AggregateValue {
  switch (aggregate.op) {
    case "count":
    case "sum":
    case "distinct":
      return 0;
    case "topk":
      return [];
    default:
      return null;
  }
}
