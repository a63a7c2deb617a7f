import { defineConfig } from "vitest/config";
import { reporters } from "./test/support/result-files.js";

// The cluster suite (test/cluster/): the operator against a real Kubernetes control plane that
// scripts/cluster/start.sh runs on loopback (built from the Go module proxy by scripts/cluster/build.sh
// on first use). Separate from vitest.config.ts so `npm test` stays fast; run it with
// `npm run test:cluster`. Files run one at a time: they share the control plane, and several of them
// stop and restart its components.
export default defineConfig({
  test: {
    reporters: reporters("cluster"),
    include: ["test/cluster/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts", "test/support/cluster-setup.ts"],
    fileParallelism: false,
    testTimeout: 120_000,
    // The first run builds the control plane: up to an hour on a busy 2-core machine.
    hookTimeout: 3_600_000,
  },
});
