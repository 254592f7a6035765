/** The real protocol under seeded fault schedules, one replica per partition down at a time (seeds 1..3000). */
import { describe } from "vitest";
import { seedSuite } from "./seed-suite.ts";

describe("simulator", () => seedSuite(1, 3000));
