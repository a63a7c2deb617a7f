import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { previousReleaseOf } from "../support/previous-release.js";
import { repoRoot } from "../support/tools.js";

// docs/upgrading.md's migration table against the migration files: every file has a row, every
// migration of the version under test is declared safe for the release before (expand first, contract a
// release later), with the reason, and each row names the release whose commit first had the file.

const read = (file: string) => readFileSync(path.join(repoRoot, file), "utf8");
const { version } = JSON.parse(read("package.json")) as { version: string };
const previous = previousReleaseOf();

const files = readdirSync(path.join(repoRoot, "src/db/migrations"))
  .filter((file) => /^\d+_.+\.sql$/.test(file))
  .map((file) => file.replace(/\.sql$/, ""));

interface Row {
  migration: string;
  release: string;
  safe: string;
}

function tableRows(): Row[] {
  const section = /^## Migrations\n([\s\S]*?)(?=^## )/m.exec(read("docs/upgrading.md"))?.[1] ?? "";
  return section
    .split("\n")
    .filter((line) => /^\| `\d+_/.test(line))
    .map((line) => {
      const [migration = "", release = "", safe = ""] = line
        .slice(1, -1)
        .split(" | ")
        .map((cell) => cell.trim());
      return { migration: migration.replaceAll("`", ""), release, safe };
    });
}

/** Whether the release commit has the file (git reads it from the repository's history). */
function inCommit(commit: string, migration: string): boolean {
  try {
    execFileSync("git", ["cat-file", "-e", `${commit}:src/db/migrations/${migration}.sql`], {
      cwd: repoRoot,
      stdio: "ignore",
    });
    return true;
  } catch {
    return false;
  }
}

describe("docs/upgrading.md, Migrations", () => {
  const rows = tableRows();

  it("has one row per migration file, in order, and none for a file that is not there", () => {
    expect(rows.map((row) => row.migration)).toEqual(files);
  });

  it.each(files.map((file) => [file]))(
    "%s: declared safe for the version before when it is this version's, with the reason",
    (file) => {
      const row = rows.find((r) => r.migration === file);
      expect(
        row,
        `no row for ${file} in docs/upgrading.md: add one (Release, Safe for the version before)`,
      ).toBeDefined();
      if (row?.release !== version) return;
      expect(
        row.safe,
        `${file} must be safe for ${previous.version} (expand first, contract a release later)`,
      ).toMatch(/^yes, because \S.{40,}/);
    },
  );

  it(`attributes to ${previous.version} or earlier exactly the migrations its commit had`, () => {
    execFileSync("git", ["cat-file", "-e", `${previous.commit}^{commit}`], { cwd: repoRoot });
    for (const row of rows) {
      const released = inCommit(previous.commit, row.migration);
      expect(row.release === version, `${row.migration} is in ${released ? previous.version : version}`).toBe(
        !released,
      );
    }
  });
});
