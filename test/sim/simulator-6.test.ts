/**
 * The simulator with key-group moves (issue 28): a mover asks the monitor for moves of
 * key groups between partitions while producers write, and replica and monitor faults
 * strike, often mid-move (both replicas of a partition too, which makes moves give up);
 * across all partitions every acknowledged record is counted once or as late, no (window,
 * key) is held by two partitions, and the replicas of each agree.
 */
import { describe } from "vitest";
import { seedSuite } from "./seed-suite.ts";

describe("simulator, key-group moves", () => seedSuite(80_001, 2000, { workload: "moves" }));
describe("simulator, key-group moves, both replicas down", () => seedSuite(90_001, 500, { workload: "moves", bothDown: true }));
