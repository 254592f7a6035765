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
              bindings: { FLUX_API_TOKEN: "test-token", FLUX_MAX_BATCH_EVENTS: "100", FLUX_MAX_BODY_BYTES: "65536", FLUX_CHECKPOINT_EVERY: "4" },
            },
          }),
        ],
        test: {
          name: "workers",
          include: ["test/integration/**/*.test.ts", "test/fault/**/*.test.ts"],
        },
      },
    ],
  },
});
