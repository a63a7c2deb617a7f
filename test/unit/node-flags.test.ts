import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { repoRoot } from "../support/tools.js";

// The service runs with the same Node flags however it is started: `npm start`, the CLI's bin
// (`webhook-operator serve`, through main.ts's shebang), and the image's ENTRYPOINT, which the chart
// and the plain manifests keep by giving only `args`. The memory figures (bench/memory.ts, which
// reads npm start's flags) hold for all of them only if these agree.

const read = (relative: string) => readFileSync(path.join(repoRoot, relative), "utf8");
const flagsIn = (words: string[]) => words.filter((word) => word.startsWith("--"));

const startScript = JSON.parse(read("package.json")).scripts.start as string;
const shebang = read("src/cli/main.ts").split("\n")[0] ?? "";
const entrypoint = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(read("Dockerfile"))?.[1] ?? "[]") as string[];

describe("the Node flags of the service", () => {
  const npmStart = flagsIn(startScript.split(" "));

  it("npm start gives some", () => {
    expect(npmStart).toContain("--max-semi-space-size=4");
    expect(npmStart).toContain("--heap-growing-percent=50");
  });

  it.each([
    ["the CLI's shebang", shebang.startsWith("#!/usr/bin/env -S node ") ? flagsIn(shebang.split(" ")) : []],
    ["the image's ENTRYPOINT", entrypoint[0] === "node" ? flagsIn(entrypoint) : []],
  ])("%s gives the same", (_where, flags) => {
    expect(flags).toEqual(npmStart);
  });

  it("the plain manifests' operator container keeps the ENTRYPOINT (args only, no command)", () => {
    const deployment = parseAllDocuments(read("manifests/install.yaml"))
      .map((document) => document.toJS())
      .find((object) => object?.kind === "Deployment" && object.metadata.name === "webhook-operator");
    const operator = deployment.spec.template.spec.containers.find(
      (container: { name: string }) => container.name === "operator",
    );
    expect(operator.command).toBeUndefined();
    expect(operator.args).toEqual(["serve"]);
  });
});
