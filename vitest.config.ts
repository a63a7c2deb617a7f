import { defineConfig } from "vitest/config";

// Unit tests need nothing but Node; integration tests get a real Postgres (embedded, or DATABASE_URL)
// from test/support/global-setup.ts and a fresh database per test file copied from a migrated template.
export default defineConfig({
  test: {
    projects: [
      { test: { name: "unit", include: ["test/unit/**/*.test.ts"] } },
      {
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          globalSetup: ["test/support/global-setup.ts"],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
