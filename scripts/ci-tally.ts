// The closing line of `.ci/run`: every suite's results added up, from the JSON files the vitest
// suites and the reliability suite write into TEST_RESULTS_DIR (test/support/result-files.ts). Each
// file gives numPassedTests, numFailedTests and numPendingTests (skipped and todo), as vitest's JSON
// reporter does. A run that counted no test at all fails: something did not run.
//
// The last line is the whole run's count alone, in the plain form CI reads ("N passed, N failed, N
// skipped"); the lines per suite above it are worded otherwise, so that only one line of the run has
// that form. (Two landings were read as running no test: the first closed on vitest's summaries, the
// second printed the per-suite counts in the same form as the total, behind a prefix.)
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

interface Counts {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests?: number;
}

const dir = process.env.TEST_RESULTS_DIR ?? process.argv[2];
if (!dir) {
  console.error("ci-tally: name the results folder (TEST_RESULTS_DIR or the first argument)");
  process.exit(2);
}

const total = { passed: 0, failed: 0, skipped: 0 };
for (const file of readdirSync(dir)
  .filter((name) => name.endsWith(".json"))
  .sort()) {
  const counts = JSON.parse(readFileSync(join(dir, file), "utf8")) as Counts;
  const skipped = counts.numPendingTests + (counts.numTodoTests ?? 0);
  const suite = file.replace(/-[0-9a-f-]{36}\.json$|\.json$/, "");
  console.log(
    `  ${suite.padEnd(24)} passing ${counts.numPassedTests}, failing ${counts.numFailedTests}, skipped ${skipped}`,
  );
  total.passed += counts.numPassedTests;
  total.failed += counts.numFailedTests;
  total.skipped += skipped;
}
console.log(`${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
process.exit(total.failed === 0 && total.passed > 0 ? 0 : 1);
