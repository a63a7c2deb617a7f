import { randomUUID } from "node:crypto";
import { join } from "node:path";

/**
 * The suites' reporters. Under `.ci/run`, TEST_RESULTS_DIR names a folder where each vitest run also
 * writes its results as JSON, so the run can close on one line that adds up every suite
 * (scripts/ci-tally.ts). Elsewhere only the usual terminal reporter runs.
 */
export function reporters(suite: string): (string | [string, { outputFile: string }])[] {
  const dir = process.env.TEST_RESULTS_DIR;
  if (!dir) return ["default"];
  return ["default", ["json", { outputFile: join(dir, `${suite}-${randomUUID()}.json`) }]];
}
