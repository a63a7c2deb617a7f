import { execFile } from "node:child_process";
import { appendFile, cp, mkdtemp, rm, stat, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { repoRoot } from "../support/tools.js";

// What `npm start` runs first (scripts/build.ts --if-changed), in a copy of the sources, so the dist/
// the other tests use is left alone: a fresh clone builds everything, a restart with nothing changed
// builds nothing, and a change rebuilds the part it belongs to.

const run = promisify(execFile);
let copy: string;
beforeAll(async () => {
  copy = await mkdtemp(path.join(tmpdir(), "wo-build-"));
  for (const entry of ["src", "dashboard", "scripts", "package.json", "package-lock.json"]) {
    await cp(path.join(repoRoot, entry), path.join(copy, entry), { recursive: true });
  }
  for (const config of ["tsconfig.json", "tsconfig.build.json", "tsconfig.verify.json"]) {
    await cp(path.join(repoRoot, config), path.join(copy, config));
  }
  await symlink(path.join(repoRoot, "node_modules"), path.join(copy, "node_modules"));
}, 60_000);
afterAll(() => rm(copy, { recursive: true, force: true }));

const prestart = async () =>
  (await run(process.execPath, ["scripts/build.ts", "--if-changed"], { cwd: copy, timeout: 120_000 })).stdout;
const builtAt = async (file: string) => (await stat(path.join(copy, file))).mtimeMs;

it("builds a fresh clone, then only what changed", { timeout: 180_000 }, async () => {
  expect(await prestart()).toBe(
    "build: server rebuilt (its sources changed since the last build)\n" +
      "build: dashboard rebuilt (its sources changed since the last build)\n",
  );
  const server = await builtAt("dist/server/main.js");
  const page = await builtAt("dist/dashboard/index.html");

  expect(await prestart()).toBe("");
  expect(await builtAt("dist/server/main.js")).toBe(server);
  expect(await builtAt("dist/dashboard/index.html")).toBe(page);

  await appendFile(path.join(copy, "dashboard/src/styles.css"), "\n/* changed */\n");
  expect(await prestart()).toBe("build: dashboard rebuilt (its sources changed since the last build)\n");
  expect(await builtAt("dist/server/main.js")).toBe(server);
});
