/**
 * Upstream outputs as downstream events (issue 27): a closed-window result becomes the
 * event `{ key, group, windowStartMs, windowEndMs, values }` (D's field paths read
 * `values.n`, or `group.host` for the upstream key's field `host`), its event time
 * `windowEndMs − 1`, the window's last millisecond (as Flink stamps window results), so
 * U's minute [0, 60 000) lands in D's minute [0, 60 000); routed by D's own spec.
 * Deterministic: both U replicas route an output alike, whenever they do it.
 */
import { FluxError } from "../errors.ts";
import { splitFieldPath } from "../field-path.ts";
import { routeEvents } from "../ingest/route-events.ts";
import type { KeyGroupMap } from "../keygroups/key-groups.ts";
import { sourcesOf, type DataflowSpec } from "../wire/dataflow-spec.ts";
import { sideSpec } from "../operators/join/join-sides.ts";
import type { NumberedOutput } from "../wire/replica-rpc.ts";
import type { WindowResult } from "../wire/window-result.ts";
import type { RoutedOutput } from "./exchange-types.ts";

/** An upstream as routing needs it: its id and the field(s) its results are keyed by. */
export interface UpstreamKey {
  id: string;
  key: DataflowSpec["key"];
}

/** The event a downstream stage reads for one upstream result (`closed` is dropped: every delivered result is closed). */
export function outputEvent(result: WindowResult, key: DataflowSpec["key"]): { key: string; group: Record<string, unknown>; windowStartMs: number; windowEndMs: number; values: WindowResult["values"] } {
  return { key: result.key, group: groupOf(result.key, key) ?? Object.create(null), windowStartMs: result.windowStartMs, windowEndMs: result.windowEndMs, values: result.values };
}

/**
 * The upstream key's values by its field paths, as strings: for the key `["subnet","host"]`
 * and the result key `["10.0.1.0/24","10.0.1.7"]`, `{ subnet: "10.0.1.0/24", host:
 * "10.0.1.7" }`; a dotted path nests (`flow.src` → `{ flow: { src } }`). Objects without a
 * prototype, so no field name reaches one. Null when a list key does not parse as such.
 */
function groupOf(key: string, fields: DataflowSpec["key"]): Record<string, unknown> | null {
  const paths = typeof fields === "string" ? [fields] : fields;
  let parts: unknown = [key];
  if (typeof fields !== "string") {
    try {
      parts = JSON.parse(key);
    } catch {
      return null;
    }
  }
  if (!Array.isArray(parts) || parts.length !== paths.length) return null;
  const group: Record<string, unknown> = Object.create(null);
  paths.forEach((path, i) => {
    const names = splitFieldPath(path);
    let node = group;
    names.slice(0, -1).forEach((name) => {
      const next = node[name];
      node = (node[name] = typeof next === "object" && next !== null ? next : Object.create(null)) as Record<string, unknown>;
    });
    node[names[names.length - 1] ?? path] = String(parts[i]);
  });
  return group;
}

/** The event time of an upstream result in a stage: its window's last millisecond. */
function outputTimeMs(result: Pick<WindowResult, "windowEndMs">): number {
  return result.windowEndMs - 1;
}

/**
 * Routes each output of `upstream` by D's `spec`: without a `timeField`, routing stamps
 * each event with {@link outputTimeMs} as its receive time. An output D's filter drops
 * routes nowhere; one D cannot read (a missing field, say) routes nowhere with its
 * `problem`, for the caller to count and report (never dropped silently). A join routes
 * each output by its side's spec, its record marked with the side (`join-sides.ts`).
 * Routing needs no clock.
 * @returns one entry per output, in the order given.
 * @throws Error when D is a join that does not read `upstream`.
 */
export function routeOutputs(spec: DataflowSpec, groups: KeyGroupMap, outputs: readonly NumberedOutput[], maxKeyLength: number, upstream: UpstreamKey): RoutedOutput[] {
  const side = spec.join ? sourcesOf(spec).indexOf(upstream.id) : -1;
  if (spec.join && side !== 0 && side !== 1) throw new Error(`join reads no dataflow '${upstream.id}'`);
  const routing = side === 0 || side === 1 ? sideSpec(spec, side) : spec;
  return outputs.map(({ outputSeq, result }): RoutedOutput => {
    try {
      const routed = routeEvents(routing, [outputEvent(result, upstream.key)], outputTimeMs(result), maxKeyLength, groups);
      for (const [partition, records] of routed) {
        const record = records[0] ?? null;
        return { outputSeq, partition, record: record && side >= 0 ? [record[0], record[1], side, ...record.slice(2)] : record };
      }
      return { outputSeq, partition: null, record: null };
    } catch (err) {
      if (!(err instanceof FluxError) || err.code !== "INVALID_EVENT") throw err;
      return { outputSeq, partition: null, record: null, problem: firstProblem(err) };
    }
  });
}

/** The first problem routing found, as `field: problem` (the error's details list them). */
function firstProblem(err: FluxError): string {
  const details = err.details as { problems?: { field?: unknown; problem?: unknown }[] } | undefined;
  const first = Array.isArray(details?.problems) ? details.problems[0] : undefined;
  return first && typeof first.problem === "string" ? `${String(first.field)}: ${first.problem}` : err.message;
}
