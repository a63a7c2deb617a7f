import { defineConfig } from "vitest/config";
import { reporters } from "./test/support/result-files.js";

// The image suite (test/image/): `npm run image` builds the operator's image (and, where the official
// base images cannot be pulled, the stand-in bases), then the tests run the images with the engine
// scripts/image/engine.sh chooses. Run it with `npm run test:image`. Files run one at a time: two
// cores, and containers that take a while to start.
export default defineConfig({
  test: {
    reporters: reporters("image"),
    include: ["test/image/**/*.test.ts"],
    globalSetup: ["test/image/build-images.ts"],
    fileParallelism: false,
    testTimeout: 120_000,
    // The first build makes the stand-in bases too: about 5 minutes on an idle 2-core machine.
    hookTimeout: 1_800_000,
  },
});
