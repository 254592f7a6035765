/** Both replicas of a partition down at once: it reports unavailable, never answers wrongly, and recovers. */
import { describe } from "vitest";
import { seedSuite } from "./seed-suite.ts";

describe("simulator, both replicas down", () => seedSuite(1, 1000, { bothDown: true }));
