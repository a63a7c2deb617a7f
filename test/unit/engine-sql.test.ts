import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { compactText, loadSqlStatement, numberParameters } from "../../src/db/sql-statement.js";
import { repoRoot } from "../support/tools.js";

// The delivery engine's statements are .sql files written by hand (src/delivery-engine/sql/), loaded by
// src/db/sql-statement.ts: named parameters in the file, positional ones on the wire.

const directory = path.join(repoRoot, "src/delivery-engine/sql");
const files = readdirSync(directory).filter((file) => file.endsWith(".sql"));

describe("named parameters", () => {
  it("numbers each name in order of first use, the same number each time it recurs", () => {
    expect(numberParameters("SELECT :b::int + :a, :b")).toEqual({
      text: "SELECT $1::int + $2, $1",
      parameters: ["b", "a"],
    });
  });

  it("leaves casts, comments, quoted text and quoted identifiers alone", () => {
    const source = `-- :not_one
SELECT ':no', E'\\':no', "a:no", x::text, /* :no */ :yes FROM t -- :no`;
    expect(numberParameters(source)).toEqual({ text: source.replace(":yes", "$1"), parameters: ["yes"] });
  });

  it("sends the code without its comments, whitespace runs as one space, quoted text as written", () => {
    const source = `-- what it does
SELECT 'a  -- not a comment', E'\\n  /* nor this */',  "col  name"  /* gone */
  FROM t  -- gone too
 WHERE x = 1`;
    expect(compactText(source)).toBe(
      `SELECT 'a  -- not a comment', E'\\n  /* nor this */', "col  name" FROM t WHERE x = 1`,
    );
  });

  it("refuses a positional parameter written in a file", () => {
    expect(() => numberParameters("SELECT $1", "claim")).toThrow(/claim\.sql uses a positional parameter/);
  });

  it("lays values out by name and refuses a missing or an unknown one", () => {
    const statement = loadSqlStatement<Record<string, unknown>>(
      new URL(`file://${path.join(directory, "claim.sql")}`),
    );
    const complete = Object.fromEntries(statement.parameters.map((name, i) => [name, i]));
    expect(statement.values(complete)).toEqual(statement.parameters.map((_, i) => i));
    const { worker: _, ...missing } = complete;
    expect(() => statement.values(missing)).toThrow("claim.sql needs :worker");
    expect(() => statement.values({ ...complete, workr: "x" })).toThrow("claim.sql has no parameter workr");
  });
});

describe("the engine's statements as files", () => {
  it("are the claim, the record and the emit", () => {
    expect(files.sort()).toEqual(["claim.sql", "emit-events.sql", "record-outcomes.sql"]);
  });

  it.each(files)(
    "%s reads on its own: short, named parameters only, each explained in its header",
    (file) => {
      const source = readFileSync(path.join(directory, file), "utf8");
      const lines = source.trimEnd().split("\n").length;
      expect(lines).toBeLessThanOrEqual(file === "claim.sql" ? 150 : 250);
      const { parameters } = numberParameters(source, file);
      expect(parameters.length).toBeGreaterThan(0);
      // Every parameter is named in the file's comments, where a reader learns what it carries.
      const comments = source.match(/--[^\n]*/g)?.join("\n") ?? "";
      for (const parameter of parameters)
        expect(comments, `${file}: :${parameter}`).toContain(`:${parameter}`);
    },
  );

  it.each(files)("%s is sent as its name and its code, one line each", (file) => {
    const { text } = loadSqlStatement(new URL(`file://${path.join(directory, file)}`));
    const [first, code, ...more] = text.split("\n");
    expect(first).toBe(`-- ${file}`);
    expect(more).toEqual([]);
    // What is left once the quoted text is taken out holds no comment.
    expect(code?.replace(/'(?:''|[^'])*'|"(?:""|[^"])*"/g, "")).not.toMatch(/--|\/\*/);
  });
});
