import { defineConfig } from "vitest/config";

// The real-cluster end-to-end suite (test/e2e/): kind, Docker, helm, kubectl. Separate from
// vitest.config.ts, so `npm test` never runs it; run it with `npm run test:e2e`. It skips itself, with
// the reason, where no Docker engine answers or kind is missing (E2E_REQUIRED=1 makes that a failure).
export default defineConfig({
  test: {
    include: ["test/e2e/**/*.test.ts"],
    // Building the image and creating a cluster take minutes; each step sets its own bound.
    testTimeout: 1_200_000,
    hookTimeout: 900_000,
    fileParallelism: false,
  },
});
