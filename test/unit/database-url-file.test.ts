import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/app/config.js";

// DATABASE_URL_FILE: the URL with its password from a mounted file (the chart's Secret), not the
// environment. Every failure names the setting and the file and never shows what the file holds.
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "wo-database-url-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, content: string): Promise<string> {
  const at = path.join(dir, name);
  await writeFile(at, content);
  return at;
}

function problemWith(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("loadConfig accepted it");
}

describe("DATABASE_URL_FILE", () => {
  it("reads the URL from the file, its trailing newline dropped", async () => {
    const url = "postgres://operator:s3cret@db.example:5432/hooks";
    expect(loadConfig({ DATABASE_URL_FILE: await file("url", `${url}\n`) }).database.url).toBe(url);
  });

  it.each([
    [
      "missing",
      async () => path.join(dir, "missing"),
      "cannot be read (ENOENT): mount the file holding the database URL there, or set DATABASE_URL instead",
    ],
    [
      "empty",
      async () => file("empty", " \n"),
      "is empty: it must hold the database URL (postgres://user:password@host:5432/db)",
    ],
    [
      "not a postgres URL",
      async () => file("http", "http://user:hunter2@db/x"),
      "does not hold a postgres:// or postgresql:// URL",
    ],
  ])("refuses a file that is %s, naming the setting and the file", async (_, make, reason) => {
    const at = await make();
    const problem = problemWith({ DATABASE_URL_FILE: at });
    expect(problem).toBe(`Invalid configuration:\n  DATABASE_URL_FILE: ${at} ${reason}`);
    expect(problem).not.toContain("hunter2");
  });

  it("refuses DATABASE_URL and DATABASE_URL_FILE together", async () => {
    const at = await file("both", "postgres://h/db");
    expect(problemWith({ DATABASE_URL: "postgres://h/db", DATABASE_URL_FILE: at })).toContain(
      "DATABASE_URL_FILE: DATABASE_URL is set too; set only one of them",
    );
  });
});
