/**
 * The simulator over a windowed join (issue 27): a stage joining the first dataflow's
 * results with those of a stage reading it (a diamond), inner or left by seed, with faults
 * on every stage; the join's results equal a single-node run over its inputs.
 */
import { describe } from "vitest";
import { seedSuite } from "./seed-suite.ts";

describe("simulator, a windowed join", () => seedSuite(70_001, 1000, { workload: "join" }));
