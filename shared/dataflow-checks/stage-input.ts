/**
 * What a stage reads (issue 27): its upstreams' closed-window results, each the event
 * `{ key, windowStartMs, windowEndMs, values }`. Described as a declared stream schema, so
 * a stage's spec is checked exactly as one over a declared stream (`stream-schema-fit.ts`):
 * reading `values.n` where an upstream has no aggregate `n` is refused at creation.
 */
import { specProblems } from "./stream-schema-fit.ts";
import type { AggregateSpec, DataflowSpec } from "../wire/dataflow-spec.ts";
import type { FieldType, SchemaProblem, StreamSchema } from "../wire/stream-schema.ts";

/** The type of the value one built-in aggregate emits. */
function valueType(aggregate: AggregateSpec): FieldType {
  return aggregate.op === "topk" ? "array" : "number";
}

/**
 * The schema of the events a stage reading `upstreams` sees: `values.<name>` for each
 * aggregate every upstream emits with the same type. An upstream with a custom operator
 * declares no values (its output fields are its own), so then `values` is open.
 */
function resultSchemaOf(upstreams: readonly Pick<DataflowSpec, "aggregates" | "operator">[]): StreamSchema {
  const fields: StreamSchema["fields"] = {
    key: { type: "string", required: true },
    windowStartMs: { type: "number", required: true },
    windowEndMs: { type: "number", required: true },
    values: { type: "object", required: true },
  };
  const open = upstreams.some((u) => u.operator !== undefined || u.aggregates === undefined);
  if (open) return { fields, additionalFields: true };
  const [first, ...rest] = upstreams;
  for (const [name, aggregate] of Object.entries(first?.aggregates ?? {})) {
    const type = valueType(aggregate);
    const everywhere = rest.every((u) => {
      const other = u.aggregates?.[name];
      return other !== undefined && valueType(other) === type;
    });
    if (everywhere) fields[`values.${name}`] = { type, required: true };
  }
  return { fields, additionalFields: false };
}

/** What a stage's checks need to know of a dataflow it names in `from`. */
export interface UpstreamView {
  spec: Pick<DataflowSpec, "aggregates" | "operator">;
  deleting: boolean;
}

/**
 * Problems of stage `id` reading `sources` (each `from` entry must be another dataflow that
 * exists and is not being deleted; specs never change, so no cycle can form otherwise),
 * then of its spec against its upstreams' results ({@link resultSchemaOf}).
 */
export function stageProblems(
  id: string,
  spec: DataflowSpec,
  sources: readonly string[],
  lookup: (name: string) => UpstreamView | null,
): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const upstreams: UpstreamView[] = [];
  for (const name of sources) {
    const upstream = name === id ? null : lookup(name);
    if (name === id) problems.push({ path: ["from"], message: "a dataflow cannot read its own results" });
    else if (!upstream) problems.push({ path: ["from"], message: `no dataflow '${name}': create the upstream first` });
    else if (upstream.deleting) problems.push({ path: ["from"], message: `dataflow '${name}' is being deleted` });
    else upstreams.push(upstream);
  }
  if (problems.length > 0) return problems;
  return specProblems(resultSchemaOf(upstreams.map((u) => u.spec)), spec);
}
