/**
 * The built-in windowed equi-join (issue 27, docs/PIPELINES.md): two window aggregates,
 * one per side, over the same key and window; a window closes on both sides at the same
 * tick (the stage's clock, its upstreams' lowest watermark) and the join emits one result
 * per key that the kind keeps: both sides had results (`inner`), or the left side did
 * (`left`). State lives only while its window is open, so it is bounded by the window;
 * a result that arrives after its window closed is late, counted and dropped on its side.
 * Closes are never spread over steps: both sides must close the same window at once.
 */
import type { DataflowSpec } from "../../wire/dataflow-spec.ts";
import { compareResults, type FluxRecord, type WindowResult } from "../../wire/window-result.ts";
import type { Emit, Operator, ResultFilter } from "../operator.ts";
import type { WindowAggregateState } from "../window-aggregate-state.ts";
import { windowAggregate } from "../window-aggregate.ts";
import { emptyValues, sideSpec } from "./join-sides.ts";

interface WindowJoinState {
  left: WindowAggregateState;
  right: WindowAggregateState;
}

const positionOf = (r: WindowResult) => `${r.windowStartMs}|${r.key}`;

/** The join operator of a spec with `join` and `window` (throws without them). */
export function windowJoin(spec: DataflowSpec): Operator<WindowJoinState> {
  const join = spec.join;
  if (!join) throw new Error("a join needs join");
  const left = windowAggregate(sideSpec(spec, 0), true);
  const right = windowAggregate(sideSpec(spec, 1), true);
  const rightEmpty = emptyValues(join.right);

  /** The results the kind keeps, each with both sides' values, in (window start, key) order. */
  const joined = (lefts: readonly WindowResult[], rights: readonly WindowResult[], closed: boolean): WindowResult[] => {
    const byPosition = new Map(rights.map((r) => [positionOf(r), r]));
    const results: WindowResult[] = [];
    for (const l of lefts) {
      const r = byPosition.get(positionOf(l));
      if (!r && join.kind === "inner") continue;
      results.push({ key: l.key, windowStartMs: l.windowStartMs, windowEndMs: l.windowEndMs, values: { ...l.values, ...(r?.values ?? rightEmpty) }, closed });
    }
    return results.sort(compareResults);
  };

  const advance = (state: WindowJoinState, timeMs: number, out: Emit<WindowResult>): WindowJoinState => {
    const lefts: WindowResult[] = [];
    const rights: WindowResult[] = [];
    state.left = left.tick(state.left, timeMs, (r) => void lefts.push(r));
    state.right = right.tick(state.right, timeMs, (r) => void rights.push(r));
    for (const result of joined(lefts, rights, true)) out(result);
    return state;
  };

  return {
    init: () => ({ left: left.init(), right: right.init() }),
    process(state, records: readonly FluxRecord[]) {
      const sides: [FluxRecord[], FluxRecord[]] = [[], []];
      for (const record of records) {
        const [key, timeMs, side, ...fields] = record;
        sides[side === 1 ? 1 : 0].push([key, timeMs, ...fields]);
      }
      // Records never move a join's clock (its upstreams' watermark does), so they close nothing.
      const none = () => undefined;
      if (sides[0].length > 0) state.left = left.process(state.left, sides[0], none);
      if (sides[1].length > 0) state.right = right.process(state.right, sides[1], none);
      return state;
    },
    tick: (state, timeMs, out) => advance(state, timeMs, out),
    closing: () => false,
    snapshot: (state) => ({ left: left.snapshot(state.left), right: right.snapshot(state.right) }),
    restore(snapshot) {
      const value = snapshot as { left?: unknown; right?: unknown } | null;
      if (typeof value !== "object" || value === null || !("left" in value) || !("right" in value)) throw new Error("join checkpoint: expected { left, right }");
      return { left: left.restore(value.left), right: right.restore(value.right) };
    },
    openResults(state, filter: ResultFilter) {
      const all = { ...filter, limit: undefined };
      const results = joined(left.openResults(state.left, all), right.openResults(state.right, all), false);
      return filter.limit === undefined ? results : results.slice(0, filter.limit);
    },
    lateRecords: (state) => left.lateRecords(state.left) + right.lateRecords(state.right),
    openEntries: (state) => left.openEntries(state.left) + right.openEntries(state.right),
    watermarkMs: (state) => left.watermarkMs(state.left),
  };
}
