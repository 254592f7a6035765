/** Declares Vitest cases that run a range of simulator seeds in chunks, failing with replay commands. */
import { expect, it } from "vitest";
import { describeFailures, runSeeds } from "./run-seeds.ts";
import type { SimOptions } from "./sim-world.ts";

const CHUNK = 1000;

export function seedSuite(from: number, count: number, options: SimOptions = {}): void {
  for (let at = from; at < from + count; at += CHUNK) {
    const size = Math.min(CHUNK, from + count - at);
    it(`holds every invariant for seeds ${at}..${at + size - 1}`, { timeout: 300_000 }, async () => {
      const report = await runSeeds(at, size, options);
      expect(report.failures, describeFailures(report)).toEqual([]);
      expect(report.runs).toBe(size);
    });
  }
}
