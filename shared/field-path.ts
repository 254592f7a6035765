/**
 * Field paths (issue 11): the one meaning of a field name anywhere in a spec. `a.b.c`
 * reads own property `c` of own property `b` of own property `a` of the event; arrays
 * are not entered, and a name of `Object.prototype` never reads an inherited value.
 * Filters, projections, keys, times, aggregates, custom operators' fields and stream
 * schemas all read fields through this module.
 */
import * as z from "zod";

/** A field path split into its names. */
export type FieldPath = readonly string[];

/** A field name or dotted path such as `flow.src.ip`: non-empty names joined by `.`, at most 256 characters. */
export const FieldPathSchema = z.string().max(256).regex(/^[^.]+(\.[^.]+)*$/, "a field name or dotted path such as flow.src.ip (no empty names)");

/** Splits a path (already valid by {@link FieldPathSchema}) into its names. */
export function splitFieldPath(path: string): FieldPath {
  return path.split(".");
}

/**
 * The value at `path` in `event`, or `undefined` when any step is missing, is not an
 * own property, or passes through something other than a plain object (an array, a scalar).
 */
export function readField(event: unknown, path: FieldPath): unknown {
  let value = event;
  for (const name of path) {
    if (typeof value !== "object" || value === null || Array.isArray(value) || !Object.hasOwn(value, name)) return undefined;
    value = (value as Record<string, unknown>)[name];
  }
  return value;
}

/** Reads fields by path, each path split once: for the router's per-event hot loop. */
export function fieldReader(path: string): (event: unknown) => unknown {
  const names = splitFieldPath(path);
  const only = names[0];
  if (names.length === 1 && only !== undefined) return ownFieldReader(only);
  return (event) => readField(event, names);
}

/**
 * Reads one own field by its whole name, dots included: for the output fields of a
 * projection, which are names, not paths (new specs cannot put a `.` in them; older
 * stored ones may have).
 */
export function ownFieldReader(name: string): (event: unknown) => unknown {
  return (event) => (typeof event === "object" && event !== null && !Array.isArray(event) && Object.hasOwn(event, name) ? (event as Record<string, unknown>)[name] : undefined);
}
