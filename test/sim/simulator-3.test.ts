/** The simulator over the other workloads: the heavy-hitters custom operator, and windows closed by clock ticks. */
import { describe } from "vitest";
import { seedSuite } from "./seed-suite.ts";

describe("simulator, heavy-hitters custom operator", () => seedSuite(20_001, 1000, { workload: "heavy-hitters" }));
describe("simulator, clock ticks", () => seedSuite(30_001, 1000, { workload: "ticks" }));
