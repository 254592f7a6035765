import { heavyHitters } from "./custom/heavy-hitters.ts";
const OPERATORS = {
    "heavy-hitters": heavyHitters,
};
/** The operator registered under `name`, if any. */
export function findOperator(name) {
    return Object.hasOwn(OPERATORS, name) ? OPERATORS[name] : undefined;
}
/** Registered names, sorted. */
export function operatorNames() {
    return Object.keys(OPERATORS).sort();
}
