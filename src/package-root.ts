import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export interface PackageJson {
  name?: string;
  version?: string;
}

/**
 * The folder of webhook-operator's package.json (the repository, or /app in the image) and what it
 * says, found by walking up from this file: it runs from src/ (tsx, tests), from dist/src/ (tsc's
 * modules) or from dist/server/ (the bundle `npm start`, the CLI and the image run), so the files the
 * build puts in dist/ are found from the root, not from where this code happens to be.
 */
function findPackage(): { root: string; json: PackageJson } | undefined {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, "package.json");
    if (existsSync(candidate)) {
      const json = JSON.parse(readFileSync(candidate, "utf8")) as PackageJson;
      if (json.name === "webhook-operator") return { root: dir, json };
    }
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

const found = findPackage();

export const packageRoot: string | undefined = found?.root;
export const packageJson: PackageJson = found?.json ?? {};
