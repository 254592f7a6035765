import { bindOperator } from "./operator.ts";
import { findOperator } from "./registry.ts";
import { windowAggregate, windowRecordFields } from "./window-aggregate.ts";
/** Compiles a validated spec; throws if it names an operator that is no longer registered. */
export function compileDataflow(spec) {
    if (spec.operator) {
        const registered = findOperator(spec.operator.name);
        if (!registered)
            throw new Error(`operator '${spec.operator.name}' is not registered`);
        return registered.compile(spec.operator.params);
    }
    const operator = windowAggregate(spec);
    return { fields: windowRecordFields(spec.aggregates ?? {}), maxWindowMs: spec.window?.sizeMs ?? 0, bind: (snapshot) => bindOperator(operator, snapshot) };
}
/** The record fields of a spec (what the router extracts from each event). */
export function recordFieldsOf(spec) {
    if (spec.operator)
        return compileDataflow(spec).fields;
    return windowRecordFields(spec.aggregates ?? {});
}
