import { bindOperator } from "./operator.ts";
/** Packages a definition for the registry. */
export function defineOperator(definition) {
    return {
        description: definition.description,
        params: definition.params,
        compile(raw) {
            const params = definition.params.parse(raw);
            const operator = definition.create(params);
            return { fields: definition.fields(params), maxWindowMs: definition.maxWindowMs(params), bind: (snapshot) => bindOperator(operator, snapshot) };
        },
    };
}
