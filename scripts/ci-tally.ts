// The closing line of `.ci/run`: every suite's results added up, from the JSON files the vitest
// suites and the reliability suite write into TEST_RESULTS_DIR (test/support/result-files.ts). Each
// file gives numPassedTests, numFailedTests and numPendingTests (skipped and todo), as vitest's JSON
// reporter does. A run that counted no test at all fails: something did not run.
//
// The last line is the whole run's count alone, in the plain form CI reads ("N passed, N failed, N
// skipped"); the lines per suite above it are worded otherwise, so that only one line of the run has
// that form. (Two landings were read as running no test: the first closed on vitest's summaries, the
// second printed the per-suite counts in the same form as the total, behind a prefix.)
//
// `--failures` prints only the tests that failed, one line each with the first line of its error, and
// exits 0. `.ci/run` prints it last when a suite fails, so that a run read from its tail names the
// test: a suite's own summary can be a long way up (the PostgreSQL 15 suite's is followed by the
// whole cluster suite's output).
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

interface Counts {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests?: number;
  testResults?: {
    name: string;
    message?: string;
    assertionResults?: { fullName: string; status: string; failureMessages?: string[] }[];
  }[];
}

const args = process.argv.slice(2);
const failuresOnly = args.includes("--failures");
const dir = process.env.TEST_RESULTS_DIR ?? args.find((arg) => !arg.startsWith("--"));
if (!dir) {
  console.error("ci-tally: name the results folder (TEST_RESULTS_DIR or the first argument)");
  process.exit(2);
}

const reports = readdirSync(dir)
  .filter((name) => name.endsWith(".json"))
  .sort()
  .map((file) => ({
    suite: file.replace(/-[0-9a-f-]{36}\.json$|\.json$/, ""),
    counts: JSON.parse(readFileSync(join(dir, file), "utf8")) as Counts,
  }));

if (failuresOnly) {
  const firstLine = (text: string | undefined) => (text ?? "").split("\n")[0]?.slice(0, 300) ?? "";
  const lines: string[] = [];
  for (const { suite, counts } of reports) {
    for (const file of counts.testResults ?? []) {
      const path = relative(process.cwd(), file.name);
      const failed = (file.assertionResults ?? []).filter((test) => test.status === "failed");
      for (const test of failed) {
        lines.push(`  ${suite}: ${path} > ${test.fullName}: ${firstLine(test.failureMessages?.[0])}`);
      }
      // A file that failed before any test ran (an import, a hook) has only its own message.
      if (failed.length === 0 && file.message) lines.push(`  ${suite}: ${path}: ${firstLine(file.message)}`);
    }
  }
  console.log(
    lines.length > 0
      ? `the tests that failed:\n${lines.join("\n")}`
      : "no test failed in the suites' results",
  );
  process.exit(0);
}

const total = { passed: 0, failed: 0, skipped: 0 };
for (const { suite, counts } of reports) {
  const skipped = counts.numPendingTests + (counts.numTodoTests ?? 0);
  console.log(
    `  ${suite.padEnd(24)} passing ${counts.numPassedTests}, failing ${counts.numFailedTests}, skipped ${skipped}`,
  );
  total.passed += counts.numPassedTests;
  total.failed += counts.numFailedTests;
  total.skipped += skipped;
}
console.log(`${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
process.exit(total.failed === 0 && total.passed > 0 ? 0 : 1);
