import { defineConfig } from "vitest/config";
import { reporters } from "./test/support/result-files.js";

/**
 * The order the files run in: a new random one each run, printed, so that an order that fails can be
 * run again (TEST_ORDER_SEED=N npm test).
 */
const seed = Number(process.env.TEST_ORDER_SEED) || Math.floor(Math.random() * 1_000_000);
if (!process.env.VITEST_WORKER_ID)
  console.log(`test files in random order: TEST_ORDER_SEED=${seed} runs this order again`);
const randomOrder = { shuffle: { files: true, tests: false }, seed };

/**
 * Integration tests get a real Postgres (embedded, or DATABASE_URL) from test/support/global-setup.ts
 * and a fresh database per test file copied from a migrated template. vitest.postgres.config.ts runs
 * the files whose outcome depends on the server again, on another one.
 *
 * Not isolated: each of vitest's worker processes runs its files one after another with the modules
 * it already loaded, instead of loading the service's modules again for every file (a third of the
 * suite's CPU time: 281 → 176 s, and 335 → 244 s on an idle 2-core machine, 2026-12-07). What a file
 * needs of its own it makes itself: its database, its service, its receivers; a file must not count
 * on state another file's modules left behind (process-wide metrics, pg's type parsers). The files run
 * in a new random order each time, so a file that does fails soon rather than by the luck of an order
 * (its seed is printed first).
 */
export const integrationProject = {
  name: "integration",
  include: ["test/integration/**/*.test.ts"],
  globalSetup: ["test/support/global-setup.ts"],
  isolate: false,
  // The order of the files (for vitest.postgres.config.ts, which runs this project alone).
  sequence: randomOrder,
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
    sequence: randomOrder,
    projects: [
      // Not isolated either (see integrationProject): 41 → 16 s of CPU.
      {
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          testTimeout: 30_000,
          isolate: false,
        },
      },
      { test: integrationProject },
    ],
  },
});
