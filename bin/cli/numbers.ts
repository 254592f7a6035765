/** Numeric command-line options: a value that is not a whole number in range is a usage error (exit 2), never NaN. */
import { InvalidArgumentError } from "commander";

/** A commander option parser for a whole number of at least `min`. */
export function wholeNumber(min: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`expected a whole number of at least ${min}`);
    return n;
  };
}
