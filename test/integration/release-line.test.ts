import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { repoRoot } from "../support/tools.js";

// The release line (CHANGELOG.md, releases.json, docs/upgrading.md): one version everywhere, every
// release recorded with a commit of this repository's history and a changelog section, and
// scripts/release.ts, run on a copy, recording a release and opening the next.

const read = (file: string, root = repoRoot) => readFileSync(path.join(root, file), "utf8");
const json = (file: string, root = repoRoot) => JSON.parse(read(file, root));
const { version } = json("package.json");
const { releases } = json("releases.json") as {
  releases: { version: string; commit: string; date: string }[];
};
const chart = read("charts/webhook-operator/Chart.yaml");
const order = (v: string) => v.split(".").reduce((sum, part) => sum * 1000 + Number(part), 0);

describe("the release line", () => {
  it("has one version in package.json, package-lock.json and the chart's version and appVersion", () => {
    const lock = json("package-lock.json");
    expect([lock.version, lock.packages[""].version]).toEqual([version, version]);
    expect(/^version: (\S+)$/m.exec(chart)?.[1]).toBe(version);
    expect(/^appVersion: "([^"]+)"$/m.exec(chart)?.[1]).toBe(version);
  });

  it("opens the changelog with this version, unreleased", () => {
    expect(/^## .*$/m.exec(read("CHANGELOG.md"))?.[0]).toBe(`## ${version} (unreleased)`);
  });

  it("records each release, newest first and older than this version, with its changelog section", () => {
    expect(releases.length).toBeGreaterThan(0);
    const versions = releases.map((r) => r.version);
    expect(versions).toEqual([...versions].sort((a, b) => order(b) - order(a)));
    expect(order(versions[0] ?? "")).toBeLessThan(order(version));
    for (const release of releases) {
      expect(release.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(read("CHANGELOG.md")).toContain(
        `## ${release.version} (${release.date}, ${release.commit.slice(0, 7)})`,
      );
    }
  });

  it("runs the previous release's chart on the Postgres image this version's chart runs (the node suite imports only that one)", () => {
    const postgres = (values: string) => /^postgres:[\s\S]*?^ {4}tag: "?([^"\n]+)"?$/m.exec(values)?.[1];
    const before = execFileSync(
      "git",
      ["show", `${releases[0]?.commit}:charts/webhook-operator/values.yaml`],
      {
        cwd: repoRoot,
        encoding: "utf8",
      },
    );
    expect(postgres(before)).toBeDefined();
    expect(postgres(before)).toBe(postgres(read("charts/webhook-operator/values.yaml")));
  });

  it("names releases that are commits of this repository's history, before HEAD", () => {
    for (const { commit } of releases) {
      const ancestor = spawnSync("git", ["merge-base", "--is-ancestor", commit, "HEAD"], { cwd: repoRoot });
      expect(ancestor.status, `${commit} is not in HEAD's history (a shallow clone? fetch it whole)`).toBe(0);
    }
  });
});

describe("npm run release", () => {
  let copy = "";
  afterEach(() => rmSync(copy, { recursive: true, force: true }));

  /** A repository holding the files the script reads and writes, committed, with this version's. */
  function checkout(): string {
    copy = mkdtempSync(path.join(tmpdir(), "wo-release-"));
    const files = ["package.json", "package-lock.json", "CHANGELOG.md", "releases.json", "README.md"];
    mkdirSync(path.join(copy, "charts/webhook-operator"), { recursive: true });
    for (const file of [...files, "charts/webhook-operator/Chart.yaml"])
      copyFileSync(path.join(repoRoot, file), path.join(copy, file));
    const git = (...args: string[]) => execFileSync("git", args, { cwd: copy, stdio: "ignore" });
    git("init", "-q");
    git("add", ".");
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "release candidate");
    return execFileSync("git", ["rev-parse", "HEAD"], { cwd: copy, encoding: "utf8" }).trim();
  }
  const release = (...args: string[]) =>
    spawnSync(
      process.execPath,
      [path.join(repoRoot, "scripts/release.ts"), "--root", copy, "--no-render", ...args],
      {
        encoding: "utf8",
      },
    );

  it("records this version at HEAD and opens the next everywhere", () => {
    const head = checkout();
    const next = version.replace(/\.(\d+)\.\d+$/, (_: string, minor: string) => `.${Number(minor) + 1}.0`);
    const result = release(next);
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`git tag -a v${version} ${head}`);
    expect(json("releases.json", copy).releases[0]).toMatchObject({ version, commit: head });
    expect(json("package.json", copy).version).toBe(next);
    expect(json("package-lock.json", copy).packages[""].version).toBe(next);
    const newChart = read("charts/webhook-operator/Chart.yaml", copy);
    expect(newChart).toContain(`version: ${next}\n`);
    expect(newChart).toContain(`appVersion: "${next}"\n`);
    const changelog = read("CHANGELOG.md", copy);
    expect(/^## .*$/m.exec(changelog)?.[0]).toBe(`## ${next} (unreleased)`);
    expect(changelog).toMatch(
      new RegExp(
        `^## ${version.replaceAll(".", "\\.")} \\(\\d{4}-\\d\\d-\\d\\d, ${head.slice(0, 7)}\\)$`,
        "m",
      ),
    );
    expect(read("README.md", copy)).toContain(`webhook-operator:${next}`);
    expect(read("README.md", copy)).not.toContain(`webhook-operator:${version}`);
  });

  it("refuses, changing nothing, a version that is not higher, a changed tree, or an empty changelog section", () => {
    checkout();
    const before = read("package.json", copy);
    expect(release(version).stderr).toContain("higher than");
    writeFileSync(path.join(copy, "README.md"), "changed\n");
    expect(release("99.0.0").stderr).toContain("the working tree has changes");
    execFileSync("git", ["checkout", "README.md"], { cwd: copy });
    const changelog = read("CHANGELOG.md", copy);
    const emptied = changelog.replace(/(## \S+ \(unreleased\)\n)[\s\S]*?(?=\n## )/, "$1\nNothing yet.\n");
    writeFileSync(path.join(copy, "CHANGELOG.md"), emptied);
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", "empty"], {
      cwd: copy,
    });
    expect(release("99.0.0").stderr).toContain("section lists nothing");
    expect(read("package.json", copy)).toBe(before);
  });
});
