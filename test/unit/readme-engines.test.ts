import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { docSection } from "../support/docs.js";
import { repoRoot } from "../support/tools.js";

// README.md explains the EBADENGINE warnings an older machine Node prints at `npm ci` and at each
// `npx webhook-operator`, quoting them: each quote is the package's own requirement as installed, and
// the pinned Node that runs it meets it.

const packageJson = (name: string) =>
  JSON.parse(readFileSync(path.join(repoRoot, "node_modules", name, "package.json"), "utf8"));

describe("README.md, Requirements", () => {
  it("quotes the engine warning of a package as installed, which the pinned Node satisfies", () => {
    const { text } = docSection("## Requirements");
    const [, name, version, wanted] =
      /package: '([^@']+)@([^']+)', required: \{ node: '>=([\d.]+)' \}/.exec(text.replace(/\s+/g, " ")) ?? [];
    expect(name).toBeDefined();
    const installed = packageJson(name as string);
    expect(installed.version).toBe(version);
    expect(installed.engines.node).toBe(`>=${wanted}`);
    const pinned = packageJson("node").version as string;
    const [major, minor] = pinned.split(".").map(Number);
    const [wantedMajor, wantedMinor] = (wanted as string).split(".").map(Number);
    expect(
      (major as number) > (wantedMajor as number) ||
        (major === wantedMajor && (minor as number) >= (wantedMinor as number)),
    ).toBe(true);
  });

  it("quotes the warning each npx webhook-operator prints: the project's own version and wanted Node", () => {
    const own = JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8"));
    expect(docSection("## Requirements").text.replace(/\s+/g, " ")).toContain(
      `(\`package: '${own.name}@${own.version}', required: { node: '${own.engines.node}' }\`)`,
    );
  });

  it("names the newest Node any installed package asks for as the one without warnings", () => {
    const lock = JSON.parse(readFileSync(path.join(repoRoot, "package-lock.json"), "utf8"));
    const wanted = Object.values(lock.packages as Record<string, { engines?: { node?: string } }>)
      .map((entry) => /^>=\s*(\d+)(?:\.(\d+))?/.exec(entry.engines?.node ?? ""))
      .filter((match) => match !== null)
      .map((match) => [Number(match[1]), Number(match[2] ?? 0)] as const)
      .sort(([a, b], [c, d]) => c - a || d - b)[0];
    expect(docSection("## Requirements").text.replace(/\s+/g, " ")).toContain(
      `A machine Node of ${wanted?.[0]}.${wanted?.[1]} or later has none.`,
    );
  });
});
