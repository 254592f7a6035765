/** Three Vitest projects: unit (Node), workers (workerd integration) and fault (workerd with faults on). */
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          environment: "node",
          include: ["test/unit/**/*.test.ts", "test/sim/**/*.test.ts"],
        },
      },
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              // Fixed tokens for tests; `npm start` takes them from .dev.vars instead.
              bindings: {
                FLUX_API_TOKEN: "test-token",
                FLUX_ADMIN_TOKEN: "test-admin-token",
                FLUX_MAX_BATCH_EVENTS: "100",
                FLUX_MAX_BODY_BYTES: "65536",
                FLUX_CHECKPOINT_EVERY: "4",
                // The monitor's alarm never fires by itself here; fault tests drive it.
                FLUX_HEARTBEAT_MS: "3600000",
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
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              // Faults on; the monitor's alarm never fires by itself (tests fire it), and
              // short deadlines so hung or slow replicas are noticed quickly.
              bindings: {
                FLUX_API_TOKEN: "test-token",
                FLUX_ADMIN_TOKEN: "test-admin-token",
                FLUX_ENABLE_FAULTS: "true",
                FLUX_HEARTBEAT_MS: "3600000",
                FLUX_MISS_SPACING_MS: "0",
                FLUX_PROBE_TIMEOUT_MS: "150",
                FLUX_REPLICA_TIMEOUT_MS: "400",
                FLUX_CHECKPOINT_EVERY: "4",
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
