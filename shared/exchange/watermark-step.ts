/**
 * Which watermarks a stage can tell apart (issue 27): a stage closes its windows only where
 * its clock passes a window's end plus its allowed lateness, and windows end every `slideMs`
 * (a tumbling window's size), so between two such points a higher watermark closes nothing
 * more. An upstream partition sends a watermark on its own (without results) only when it
 * reaches a new step: at most one delivery per edge and close point, not per posted batch.
 */
import type { DataflowSpec } from "../wire/dataflow-spec.ts";

/**
 * The close step of watermark `w` in a stage of `spec`: `floor((w − allowedLatenessMs) /
 * slideMs)`; for a custom operator (whose closes are its own), `w` itself.
 */
export function watermarkStepOf(spec: Pick<DataflowSpec, "window" | "operator">): (watermarkMs: number) => number {
  const window = spec.window;
  if (spec.operator !== undefined || !window) return (w) => w;
  const slideMs = window.kind === "sliding" ? window.slideMs : window.sizeMs;
  return (w) => Math.floor((w - window.allowedLatenessMs) / slideMs);
}
