// `npm run release -- <next version>`: records the version being built (package.json) as released at
// HEAD and opens the next one (docs/upgrading.md, "Cutting a release").
//   - checks: a clean tree, the versions agreeing (package.json, package-lock.json, the chart's version
//     and appVersion), the changelog's "## <version> (unreleased)" section with at least one entry,
//     <next> a higher version;
//   - writes: that section's heading with the date and commit, releases.json's new first entry, the next
//     version in package.json, package-lock.json and Chart.yaml, the image tag where docs and tests name
//     it, manifests/install.yaml (scripts/render-manifests.sh; --no-render leaves it), and a new
//     "## <next> (unreleased)" section;
//   - prints the tag command for the release commit. Nothing is committed or tagged here.
//   --root DIR works on another checkout (the tests use a copy).
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { root: { type: "string" }, "no-render": { type: "boolean" } },
});
const root = path.resolve(values.root ?? path.join(import.meta.dirname, ".."));
const next = positionals[0] ?? "";
const fail = (message: string): never => {
  process.stderr.write(`release: ${message}\n`);
  process.exit(1);
};
const git = (...args: string[]) => execFileSync("git", args, { cwd: root, encoding: "utf8" }).trim();
const file = (name: string) => path.join(root, name);
const read = (name: string) => readFileSync(file(name), "utf8");

const semver = /^(\d+)\.(\d+)\.(\d+)$/;
const parts = (v: string) =>
  (semver.exec(v) ?? fail(`${v} is not a version like 1.2.3`)).slice(1).map(Number);
const newer = (a: string, b: string) => {
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] ?? 0) > (y[i] ?? 0);
  return false;
};

if (git("status", "--porcelain") !== "") fail("the working tree has changes: release from a clean checkout");
const pkg = JSON.parse(read("package.json"));
const current: string = pkg.version;
if (!newer(next, current))
  fail(`give the next version, higher than ${current}: npm run release -- <version>`);
const lock = JSON.parse(read("package-lock.json"));
const chartFile = "charts/webhook-operator/Chart.yaml";
const chart = read(chartFile);
const chartVersions = [/^version: (\S+)$/m, /^appVersion: "?([^"\n]+)"?$/m].map((re) => re.exec(chart)?.[1]);
for (const [what, found] of [
  ["package-lock.json", lock.version],
  ["package-lock.json's root package", lock.packages?.[""]?.version],
  [`${chartFile} version`, chartVersions[0]],
  [`${chartFile} appVersion`, chartVersions[1]],
])
  if (found !== current) fail(`${what} says ${found}, package.json ${current}: make them agree first`);

const changelog = read("CHANGELOG.md");
const heading = `## ${current} (unreleased)`;
const section = changelog.split(heading)[1]?.split(/^## /m)[0];
if (section === undefined) fail(`CHANGELOG.md has no "${heading}" section`);
if (!/^- \S/m.test(section ?? "")) fail(`CHANGELOG.md's "${heading}" section lists nothing`);

const commit = git("rev-parse", "HEAD");
const date = new Date().toISOString().slice(0, 10);
const short = commit.slice(0, 7);
writeFileSync(
  file("CHANGELOG.md"),
  changelog.replace(
    heading,
    `## ${next} (unreleased)\n\nEverything on \`main\` after ${current} (${short}).\n\n## ${current} (${date}, ${short})`,
  ),
);
const releases = JSON.parse(read("releases.json"));
releases.releases.unshift({ version: current, commit, date });
writeFileSync(file("releases.json"), `${JSON.stringify(releases, null, 2)}\n`);

pkg.version = next;
writeFileSync(file("package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
lock.version = next;
lock.packages[""].version = next;
writeFileSync(file("package-lock.json"), `${JSON.stringify(lock, null, 2)}\n`);
writeFileSync(
  file(chartFile),
  chart.replace(/^version: \S+$/m, `version: ${next}`).replace(/^appVersion: .*$/m, `appVersion: "${next}"`),
);

// The image tag, archive name and version line where docs, examples and tests spell them out.
const spelled = [
  `webhook-operator:${current}`,
  `webhook-operator-${current}`,
  `webhook-operator ${current} `,
  `{"version": "${current}"`,
  `tag: "${current}"`,
];
const grep = ["grep", "-lF", ...spelled.flatMap((s) => ["-e", s]), "--", "."];
const kept = [":!CHANGELOG.md", ":!releases.json", ":!package.json", ":!package-lock.json"];
let named: string[] = [];
try {
  named = git(...grep, ...kept)
    .split("\n")
    .filter(Boolean);
} catch {
  // git grep exits 1 when no file matches.
}
for (const name of named) {
  let text = read(name);
  for (const s of spelled) text = text.replaceAll(s, s.replace(current, next));
  writeFileSync(file(name), text);
}
if (!values["no-render"])
  execFileSync("bash", ["scripts/render-manifests.sh"], { cwd: root, stdio: "inherit" });

process.stdout.write(
  `${current} released at ${commit}; this checkout is now ${next} (${named.length} files named the image).\n` +
    `Tag the release:  git tag -a v${current} ${commit} -m "webhook-operator ${current}" && git push origin v${current}\n` +
    `Then commit this: git commit -am "Open ${next}: ${current} released at ${short}"\n`,
);
