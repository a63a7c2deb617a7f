import { defineConfig } from "vitest/config";
import { reporters } from "./test/support/result-files.js";

/**
 * Integration tests get a real Postgres (embedded, or DATABASE_URL) from test/support/global-setup.ts
 * and a fresh database per test file copied from a migrated template. vitest.postgres.config.ts runs
 * the files whose outcome depends on the server again, on another one.
 */
export const integrationProject = {
  name: "integration",
  include: ["test/integration/**/*.test.ts"],
  globalSetup: ["test/support/global-setup.ts"],
  testTimeout: 120_000,
  hookTimeout: 180_000,
};

// Unit tests need nothing but Node: no process, helm, git or Postgres (those are integration tests).
// The time-outs only catch a test that hangs: a machine several times as loaded as CI's (each of the
// CLI tests starts a dozen Node processes, about 3 s each at a load of 17 on 2 cores) must slow the
// suite down, not fail it.
export default defineConfig({
  test: {
    reporters: reporters("unit-and-integration"),
    projects: [
      { test: { name: "unit", include: ["test/unit/**/*.test.ts"], testTimeout: 30_000 } },
      { test: integrationProject },
    ],
  },
});
