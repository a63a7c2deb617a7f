import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  engineSqlDirectory,
  regenerateCommand,
  renderStatementFile,
} from "../../scripts/engine-sql/render.js";
import { engineStatements } from "../../scripts/engine-sql/statements.js";
import { repoRoot } from "../support/tools.js";

const statements = await engineStatements();
const directory = path.join(repoRoot, engineSqlDirectory);
const stale = (file: string) =>
  `${engineSqlDirectory}/${file} is not the statement the engine runs: run \`${regenerateCommand}\` and commit the result`;

describe("the engine's statements as .sql files", () => {
  it.each(statements.map((statement) => [statement.file, statement] as const))(
    "%s is the statement the engine composes",
    (file, statement) => {
      const filePath = path.join(directory, file);
      expect(existsSync(filePath), stale(file)).toBe(true);
      expect(readFileSync(filePath, "utf8"), stale(file)).toBe(renderStatementFile(statement));
    },
  );

  it("holds no file for a variant the engine no longer runs", () => {
    const files = readdirSync(directory).filter((file) => file.endsWith(".sql"));
    expect(files.sort(), `run \`${regenerateCommand}\``).toEqual(statements.map((s) => s.file).sort());
  });

  it("names every prepared variant after its statement, so each file is one prepared plan", () => {
    const names = statements.flatMap((s) => (s.name === undefined ? [] : [s.name]));
    expect(new Set(names).size).toBe(names.length);
    for (const s of statements) if (s.name?.startsWith("record")) expect(s.file).toBe(`${s.name}.sql`);
  });
});
