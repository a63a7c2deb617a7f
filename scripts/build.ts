// `npm run build` builds everything; `npm start` runs `build.ts --if-changed`, which rebuilds only the
// parts whose inputs changed since their last build (a restart with nothing changed builds nothing).
// Whether inputs changed is told by a digest of their contents, kept in dist/.stamps/<part>: a git
// checkout or an edit changes it, a touch does not. Run by Node itself (type stripping), no tsx.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const at = (relative: string) => path.join(root, relative);
const tsc = (project: string) =>
  execFileSync(at("node_modules/.bin/tsc"), ["-p", project], { cwd: root, stdio: "inherit" });

interface Part {
  name: string;
  /** Files and folders whose contents the output depends on. */
  inputs: string[];
  /** A file of the output: when it is missing, the part is built whatever the stamp says. */
  output: string;
  build(): Promise<void>;
}

const parts: Part[] = [
  {
    name: "server",
    inputs: ["src", "package-lock.json", "tsconfig.json", "tsconfig.build.json", "tsconfig.verify.json"],
    output: "dist/src/cli/main.js",
    async build() {
      tsc("tsconfig.build.json");
      // The declarations of the package's one export, webhook-operator/verify.
      tsc("tsconfig.verify.json");
      rmSync(at("dist/src/db/migrations"), { recursive: true, force: true });
      cpSync(at("src/db/migrations"), at("dist/src/db/migrations"), { recursive: true });
      chmodSync(at("dist/src/cli/main.js"), 0o755);
    },
  },
  {
    name: "dashboard",
    // The dashboard imports a few modules of src/ (event types, the Link header parser).
    inputs: ["dashboard", "src", "package-lock.json"],
    output: "dist/dashboard/index.html",
    async build() {
      const { build } = await import("vite");
      await build({ configFile: at("dashboard/vite.config.ts"), logLevel: "warn" });
    },
  },
];

function filesUnder(relative: string): string[] {
  const full = at(relative);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [relative];
  return readdirSync(full, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)));
}

function digestOf(inputs: string[]): string {
  const hash = createHash("sha256");
  for (const file of inputs.flatMap(filesUnder).sort()) {
    hash
      .update(`${file}\0`)
      .update(readFileSync(at(file)))
      .update("\0");
  }
  return hash.digest("hex");
}

const ifChanged = process.argv.includes("--if-changed");
mkdirSync(at("dist/.stamps"), { recursive: true });
for (const part of parts) {
  const stamp = at(`dist/.stamps/${part.name}`);
  const digest = digestOf(part.inputs);
  const unchanged =
    existsSync(at(part.output)) && existsSync(stamp) && readFileSync(stamp, "utf8") === digest;
  if (ifChanged && unchanged) continue;
  rmSync(stamp, { force: true });
  await part.build();
  writeFileSync(stamp, digest);
  if (ifChanged) console.log(`build: ${part.name} rebuilt (its sources changed since the last build)`);
}
