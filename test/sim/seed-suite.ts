/**
 * Declares Vitest cases that run a range of simulator seeds in chunks, failing with replay
 * commands; each chunk prints its fault coverage and fails when it falls below the minimums.
 */
import { expect, it } from "vitest";
import { coverageProblems, formatCoverage } from "./coverage.ts";
import { describeFailures, runSeeds } from "./run-seeds.ts";
import type { SimOptions } from "./sim-world.ts";

const CHUNK = 1000;

export function seedSuite(from: number, count: number, options: SimOptions = {}): void {
  for (let at = from; at < from + count; at += CHUNK) {
    const size = Math.min(CHUNK, from + count - at);
    it(`holds every invariant for seeds ${at}..${at + size - 1}`, { timeout: 300_000 }, async () => {
      const report = await runSeeds(at, size, options);
      console.log(formatCoverage(`seeds ${at}..${at + size - 1}${options.bothDown ? " (both down)" : ""}${options.workload ? ` (${options.workload})` : ""}`, report.coverage));
      expect(report.failures, describeFailures(report)).toEqual([]);
      expect(report.runs).toBe(size);
      expect(coverageProblems(report.coverage, options.bothDown === true, options.workload)).toEqual([]);
    });
  }
}
