import { defineConfig } from "vitest/config";
import { reporters } from "./test/support/result-files.js";

// The dashboard in a real browser (Debian's chromium via playwright-core) against the real service on
// the embedded Postgres (or DATABASE_URL) and a real receiver on loopback. Not part of `npm test`:
// `npm run test:browser`, and `npm run screenshots` (SCREENSHOTS=1) writes docs/screenshots/.
export default defineConfig({
  test: {
    reporters: reporters("browser"),
    include: process.env.SCREENSHOTS ? ["test/browser/screenshots.shoot.ts"] : ["test/browser/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // One browser at a time on these 2-core machines.
    fileParallelism: false,
  },
});
