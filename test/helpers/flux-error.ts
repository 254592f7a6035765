/** Assertion helper for code that must throw a FluxError. */
import { FluxError } from "../../shared/errors.ts";

/** Runs `fn` and returns the FluxError it throws; fails if it throws nothing or something else. */
export function fluxErrorOf(fn: () => unknown): FluxError {
  try {
    fn();
  } catch (err) {
    if (err instanceof FluxError) return err;
    throw err;
  }
  throw new Error("expected a FluxError, nothing was thrown");
}
