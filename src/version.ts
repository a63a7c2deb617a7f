import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The package version, found by walking up from this file (src/ when run from source, dist/src/ when built). */
function readVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, "package.json");
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, "utf8")) as { name?: string; version?: string };
      if (pkg.name === "webhook-operator" && pkg.version) return pkg.version;
    }
    const parent = path.dirname(dir);
    if (parent === dir) return "0.0.0";
    dir = parent;
  }
}

export const version = readVersion();
