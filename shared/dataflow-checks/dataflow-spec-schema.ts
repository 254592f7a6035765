/**
 * The dataflow spec `PUT /v1/dataflows/{id}` accepts: the structure from `wire/` with the
 * checks that need the operator registry. Composed here, above both `wire/` and
 * `operators/`, so `wire/` imports nothing of the operators (issue 26).
 */
import { DataflowSpecStructureSchema } from "../wire/dataflow-spec.ts";
import { checkSpec } from "./spec-checks.ts";

/**
 * A spec as `PUT /v1/dataflows/{id}` accepts it: the structure with field paths checked,
 * plus the rules across fields, the registry's operator and parameter checks, and the
 * cost budget (`spec-checks.ts`); every issue names the field at fault.
 */
export const DataflowSpecSchema = DataflowSpecStructureSchema.superRefine(checkSpec);
