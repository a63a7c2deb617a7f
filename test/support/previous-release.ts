import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "./tools.js";

const run = promisify(execFile);

// The release before this version (releases.json), as its users run it: its chart and its image, built
// from its own commit with its own `npm run image`. Building takes minutes, so both are kept per commit
// in ~/.cache/webhook-operator/releases/<commit>/ (beside the cluster's binaries, and like them under
// $XDG_CACHE_HOME when it is set): a machine builds each release once.

export interface PreviousRelease {
  version: string;
  commit: string;
  /** Its charts/webhook-operator, as the commit has it. */
  chartDir: string;
  /** Its operator image saved by its `npm run image -- --save` (docker.io/library/webhook-operator:<version>). */
  imageArchive: string;
}

interface Release {
  version: string;
  commit: string;
}

/** The newest release in releases.json other than the version package.json says this tree is. */
export function previousReleaseOf(root = repoRoot): Release {
  const { version } = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as {
    version: string;
  };
  const { releases } = JSON.parse(readFileSync(path.join(root, "releases.json"), "utf8")) as {
    releases: Release[];
  };
  const previous = releases.find((release) => release.version !== version);
  if (!previous) throw new Error(`releases.json names no release before ${version}`);
  return previous;
}

async function step(what: string, command: string, args: string[], cwd: string): Promise<string> {
  try {
    const { stdout } = await run(command, args, { cwd, timeout: 3_600_000, maxBuffer: 64 << 20 });
    return stdout;
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(
      `${what} failed (${command} ${args.join(" ")}):\n${(stderr || stdout || String(error)).slice(-4000)}`,
    );
  }
}

/**
 * The previous release's chart and image, built on the first call on this machine: the commit's tree
 * (`git archive`, so the repository's own worktrees are left alone), its `npm ci`, its `npm run image
 * -- --save`. Only the operator's image is kept; the chart's Postgres image is the one this version's
 * build imports (test/integration/release-line.test.ts fails when the two charts' Postgres images differ).
 */
export async function buildPreviousRelease(
  cacheRoot = path.join(
    process.env.XDG_CACHE_HOME || path.join(homedir(), ".cache"),
    "webhook-operator/releases",
  ),
): Promise<PreviousRelease> {
  const { version, commit } = previousReleaseOf();
  const dir = path.join(cacheRoot, commit);
  const release = {
    version,
    commit,
    chartDir: path.join(dir, "charts/webhook-operator"),
    imageArchive: path.join(dir, `webhook-operator-${version}.tar`),
  };
  if (existsSync(release.imageArchive) && existsSync(path.join(release.chartDir, "Chart.yaml")))
    return release;

  mkdirSync(cacheRoot, { recursive: true });
  const work = await mkdtemp(path.join(cacheRoot, `${commit.slice(0, 12)}-building-`));
  try {
    const tree = path.join(work, "tree");
    mkdirSync(tree);
    await step(
      "reading the release's tree",
      "bash",
      ["-c", `set -o pipefail; git archive ${commit} | tar -x -C "${tree}"`],
      repoRoot,
    );
    await step("npm ci of the release", "npm", ["ci", "--no-audit", "--no-fund"], tree);
    await step(
      "npm run image of the release",
      "npm",
      ["run", "--silent", "image", "--", "--save", path.join(work, "images")],
      tree,
    );
    const archive = readdirSync(path.join(work, "images")).find((file) =>
      file.startsWith("webhook-operator-"),
    );
    if (archive !== path.basename(release.imageArchive))
      throw new Error(
        `the release's npm run image saved ${archive}, not ${path.basename(release.imageArchive)}`,
      );
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(path.join(dir, "charts"), { recursive: true });
    renameSync(path.join(tree, "charts/webhook-operator"), release.chartDir);
    renameSync(path.join(work, "images", archive), release.imageArchive);
    writeFileSync(path.join(dir, "built-from"), `${commit} ${version} ${new Date().toISOString()}\n`);
    return release;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
