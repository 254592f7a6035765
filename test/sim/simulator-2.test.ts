/** The real protocol under seeded fault schedules, one replica per partition down at a time (seeds 5001..10000). */
import { describe } from "vitest";
import { seedSuite } from "./seed-suite.ts";

describe("simulator", () => seedSuite(5001, 5000));
