import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../support/tools.js";

// scripts/ci-tally.ts, the line CI closes on and the list of failed tests a failed run ends on, read
// from the JSON a real vitest run wrote for a few tests of which one fails and one file cannot load.

const work = mkdtempSync(path.join(tmpdir(), "wo-ci-tally-"));
const results = path.join(work, "results");

/** The environment without this vitest's own variables, so that the child is a run of its own. */
function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env))
    if (name.startsWith("VITEST") || name === "TEST_RESULTS_DIR") delete env[name];
  return env;
}

function tally(...args: string[]) {
  const result = spawnSync(path.join(repoRoot, "node_modules/.bin/tsx"), ["scripts/ci-tally.ts", ...args], {
    cwd: repoRoot,
    encoding: "utf8",
    env: childEnv(),
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

beforeAll(() => {
  const tests = path.join(work, "tests");
  mkdirSync(tests);
  mkdirSync(results);
  writeFileSync(path.join(tests, "package.json"), "{}\n");
  writeFileSync(
    path.join(tests, "numbers.test.ts"),
    [
      'import { expect, test } from "vitest";',
      'test("adds", () => expect(1 + 1).toBe(2));',
      'test("compares on purpose", () => expect(1).toBe(2));',
    ].join("\n"),
  );
  writeFileSync(
    path.join(tests, "broken.test.ts"),
    ['import "./not-there.js";', 'import { test } from "vitest";', 'test("never runs", () => {});'].join(
      "\n",
    ),
  );
  const run = spawnSync(
    path.join(repoRoot, "node_modules/.bin/vitest"),
    ["run", "--root", tests, "--reporter=json", `--outputFile=${path.join(results, "example-suite.json")}`],
    { cwd: tests, encoding: "utf8", env: childEnv(), timeout: 120_000 },
  );
  // The fixture's own run fails: that is what it is for.
  expect(run.status, run.stderr).toBe(1);
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("scripts/ci-tally.ts", () => {
  it("--failures names each failed test with the first line of its error, and a file that could not load", () => {
    const { status, stdout } = tally("--failures", results);
    expect(status).toBe(0);
    const lines = stdout.trim().split("\n");
    expect(lines[0]).toBe("the tests that failed:");
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^ {2}example-suite: .*numbers\.test\.ts > compares on purpose: AssertionError: expected 1 to be 2/,
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/^ {2}example-suite: .*broken\.test\.ts: .*not-there\.js/),
    );
    expect(stdout).not.toContain("adds");
    expect(lines).toHaveLength(3);
  });

  it("closes on the run's count and fails when a test failed", () => {
    const { status, stdout } = tally(results);
    expect(status).toBe(1);
    expect(stdout.trim().split("\n").at(-1)).toBe("1 passed, 1 failed, 0 skipped");
  });

  it("says so when no test failed", () => {
    const passing = path.join(work, "passing");
    mkdirSync(passing);
    writeFileSync(
      path.join(passing, "example-suite.json"),
      JSON.stringify({ numPassedTests: 1, numFailedTests: 0, numPendingTests: 0, testResults: [] }),
    );
    expect(tally("--failures", passing).stdout.trim()).toBe("no test failed in the suites' results");
    expect(tally(passing)).toMatchObject({
      status: 0,
      stdout: expect.stringMatching(/1 passed, 0 failed, 0 skipped\n$/),
    });
  });
});
