/** Five Vitest projects: unit (Node), workers (workerd integration) and fault (workerd with faults on); then cli (Node) and browser (Chromium), both against wrangler dev. */
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

/**
 * Bindings of both workerd projects: fixed tokens (`npm start` takes them from .dev.vars
 * instead), frequent checkpoints, and a monitor alarm that never fires by itself (tests
 * fire it).
 */
const TEST_BINDINGS = {
  FLUX_API_TOKEN: "test-token",
  FLUX_ADMIN_TOKEN: "test-admin-token",
  // Two signing secrets, as during a rotation: the first signs, both verify.
  FLUX_TOKEN_SECRETS: "test-secret-new-0123456789abcdef0123, test-secret-old-0123456789abcdef0123",
  FLUX_CHECKPOINT_EVERY: "4",
  FLUX_HEARTBEAT_MS: "3600000",
};

/** The fuzz suite's seed to replay, if any (the repo's Node typings declare no `process.env`). */
const FUZZ_SEED = (process as unknown as { env: Record<string, string | undefined> }).env.FLUX_FUZZ_SEED ?? "";

export default defineConfig({
  test: {
    // Drops log lines every run prints by design (injected-fault rejections and the like), so failures stand out.
    globalSetup: ["./test/helpers/quiet-expected-noise.ts"],
    projects: [
      {
        test: {
          name: "unit",
          environment: "node",
          include: ["test/unit/**/*.test.ts", "test/sim/**/*.test.ts"],
        },
      },
      {
        // The CLI as a user runs it, against `wrangler dev` on free ports (test/helpers/local-stack.ts).
        // It runs after the other projects, so its wrangler and workerd processes do not
        // compete with their timed tests for the CPU.
        test: {
          name: "cli",
          environment: "node",
          include: ["test/cli/**/*.test.ts"],
          testTimeout: 60_000,
          sequence: { groupOrder: 1 },
        },
      },
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              // FLUX_FUZZ_SEED replays a fuzz run (test/integration/fuzz.test.ts prints its seed). A
              // dataflow is idle after one probe without progress; idle probes are at most a day apart.
              bindings: {
                ...TEST_BINDINGS,
                FLUX_MAX_BATCH_EVENTS: "100",
                FLUX_MAX_BODY_BYTES: "65536",
                FLUX_FUZZ_SEED: FUZZ_SEED,
                FLUX_IDLE_AFTER_MS: "0",
                FLUX_IDLE_PROBE_MS: "86400000",
              },
            },
          }),
        ],
        test: {
          name: "workers",
          include: ["test/integration/**/*.test.ts"],
        },
      },
      {
        // Headless Chromium: the dashboard against `wrangler dev` (test/helpers/local-stack.ts), and
        // the IndexedDB producer store against a Node ingest server.
        test: {
          name: "browser",
          environment: "node",
          include: ["test/browser/**/*.test.ts"],
          hookTimeout: 90_000,
          // With cli, after the workerd and unit projects, so wrangler dev does not compete with their timed tests.
          sequence: { groupOrder: 1 },
        },
      },
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              // Faults on; the monitor's alarm never fires by itself (tests fire it), and
              // short deadlines so hung or slow replicas are noticed quickly.
              bindings: {
                ...TEST_BINDINGS,
                FLUX_ENABLE_FAULTS: "true",
                FLUX_MISS_SPACING_MS: "0",
                FLUX_PROBE_TIMEOUT_MS: "150",
                FLUX_REPLICA_TIMEOUT_MS: "400",
                // A small outbox bound, so a stage that is down soon holds its upstream back (test/fault/stages.test.ts).
                FLUX_OUTBOX_BOUND: "8",
              },
            },
          }),
        ],
        test: {
          name: "fault",
          include: ["test/fault/**/*.test.ts"],
        },
      },
    ],
  },
});
