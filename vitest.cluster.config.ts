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
    // One worker runs the files one after another with the modules it has loaded rather than loading
    // the operator's (client-node's among them) again for each: 229 → 188 s, 117 → 78 s of CPU
    // (2026-12-07). Each file makes its own namespaces, operator and database.
    isolate: false,
    testTimeout: 120_000,
    // The first run builds the control plane: up to an hour on a busy 2-core machine.
    hookTimeout: 3_600_000,
  },
});
