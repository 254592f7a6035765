/**
 * The simulator over pipelines (issue 27): two stages in a row, and a fan-out into two
 * stages that a third reads as a union, with faults on every stage (primary, standby, a
 * fresh replica being seeded, both replicas of a partition), routers dying mid-fan-out and
 * the monitor dying mid-tick; the last stage's results equal a single-node run, stage by stage.
 */
import { describe } from "vitest";
import { seedSuite } from "./seed-suite.ts";

describe("simulator, two stages", () => seedSuite(40_001, 1000, { workload: "pipeline2" }));
describe("simulator, fan-out and a union (three stages)", () => seedSuite(50_001, 1000, { workload: "pipeline3" }));
describe("simulator, two stages, both replicas down", () => seedSuite(60_001, 500, { workload: "pipeline2", bothDown: true }));
