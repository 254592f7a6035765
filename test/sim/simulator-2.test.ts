/** The real protocol under seeded fault schedules, one replica per partition down at a time (seeds 3001..6000). */
import { describe } from "vitest";
import { seedSuite } from "./seed-suite.ts";

describe("simulator", () => seedSuite(3001, 3000));
