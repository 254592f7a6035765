/**
 * What a stage reads (issue 27): its upstreams' closed-window results, each the event
 * `{ key, group, windowStartMs, windowEndMs, values }`. Described as a declared stream schema, so
 * a stage's spec is checked exactly as one over a declared stream (`stream-schema-fit.ts`):
 * reading `values.n` where an upstream has no aggregate `n` is refused at creation.
 */
import { specProblems } from "./stream-schema-fit.ts";
import { aggregatesOf, type AggregateSpec, type DataflowSpec } from "../wire/dataflow-spec.ts";
import { sideSpec } from "../operators/join/join-sides.ts";
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
function resultSchemaOf(upstreams: readonly UpstreamView["spec"][]): StreamSchema {
  const fields: StreamSchema["fields"] = {
    key: { type: "string", required: true },
    windowStartMs: { type: "number", required: true },
    windowEndMs: { type: "number", required: true },
  };
  // The upstream key's fields, as strings under `group` (`route-outputs.ts`): those every upstream keys by.
  const keyFields = (u: UpstreamView["spec"]) => (typeof u.key === "string" ? [u.key] : u.key);
  for (const path of keyFields(upstreams[0] ?? { key: [] })) {
    if (upstreams.every((u) => keyFields(u).includes(path))) fields[`group.${path}`] = { type: "string", required: true };
  }
  // Without names to declare, `values` is an object of anything; with them, only they are (`values` undeclared itself).
  const open = upstreams.some((u) => u.operator !== undefined || aggregatesOf(u) === undefined);
  if (open) return { fields: { ...fields, values: { type: "object", required: true } }, additionalFields: true };
  const [first, ...rest] = upstreams;
  for (const [name, aggregate] of Object.entries((first && aggregatesOf(first)) ?? {})) {
    const type = valueType(aggregate);
    const everywhere = rest.every((u) => {
      const other = aggregatesOf(u)?.[name];
      return other !== undefined && valueType(other) === type;
    });
    if (everywhere) fields[`values.${name}`] = { type, required: true };
  }
  return { fields, additionalFields: false };
}

/** What a stage's checks need to know of a dataflow it names in `from`. */
export interface UpstreamView {
  spec: Pick<DataflowSpec, "aggregates" | "join" | "operator" | "key">;
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
  if (spec.join) return joinProblems(spec, sources, upstreams);
  const schema = resultSchemaOf(upstreams.map((u) => u.spec));
  return specProblems(schema, spec).map((p) => withCarried(p, schema));
}

/** "… carry no field 'values.x'" plus what they do carry, so the fix is at hand. */
function withCarried(problem: SchemaProblem, schema: StreamSchema): SchemaProblem {
  if (!problem.message.includes("carry no field") || schema.additionalFields) return problem;
  return { ...problem, message: `${problem.message} (they carry ${Object.keys(schema.fields).join(", ")})` };
}

/** A join's sides, each against its own upstream's results: the key and time on both, `left` on the first, `right` on the second. */
function joinProblems(spec: DataflowSpec, sources: readonly string[], upstreams: readonly UpstreamView[]): SchemaProblem[] {
  const seen = new Set<string>();
  return ([0, 1] as const).flatMap((side) => {
    const upstream = upstreams[side];
    if (!upstream) return [];
    const checked = { ...sideSpec(spec, side), from: sources[side] };
    const schema = resultSchemaOf([upstream.spec]);
    return specProblems(schema, checked)
      .map((p) => withCarried(p, schema))
      .map((p) => (p.path[0] === "aggregates" ? { ...p, path: ["join", side === 0 ? "left" : "right", ...p.path.slice(1)] } : p))
      .filter((p) => {
        const id = `${p.path.join(".")}: ${p.message}`;
        if (seen.has(id)) return false;
        seen.add(id);
        return true;
      });
  });
}
