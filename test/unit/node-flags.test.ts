import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { repoRoot } from "../support/tools.js";

// The service runs with the same Node flags and glibc settings however it is started: `npm start`, the
// CLI's bin (`webhook-operator serve`, through main.ts's shebang), and the image (its ENTRYPOINT and
// ENV), which the chart and the plain manifests keep by giving only `args`. The memory figures
// (bench/memory.ts, which reads npm start's command) hold for all of them only if these agree.

const read = (relative: string) => readFileSync(path.join(repoRoot, relative), "utf8");
const flagsIn = (words: string[]) => words.filter((word) => word.startsWith("--"));
const mallocSettingsIn = (words: string[]) => words.filter((word) => word.startsWith("MALLOC_"));

const startScript = JSON.parse(read("package.json")).scripts.start as string;
const shebang = read("src/cli/main.ts").split("\n")[0] ?? "";
const dockerfile = read("Dockerfile");
const entrypoint = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1] ?? "[]") as string[];
// The words of the image's ENV instruction (continued over lines ending in a backslash).
const imageEnv = (/^ENV ((?:.*\\\n)*.*)$/m.exec(dockerfile)?.[1] ?? "").split(/[\s\\]+/);

describe("the Node flags of the service", () => {
  const npmStart = flagsIn(startScript.split(" "));

  it("npm start gives some", () => {
    expect(npmStart).toContain("--max-semi-space-size=4");
    expect(npmStart).toContain("--heap-growing-percent=50");
    // `gc`, with which the service gives memory back when idle (src/app/idle-memory.ts).
    expect(npmStart).toContain("--expose-gc");
  });

  it.each([
    [
      "the CLI's shebang",
      /^#!\/usr\/bin\/env -S (?:MALLOC_\S+ )*node /.test(shebang) ? flagsIn(shebang.split(" ")) : [],
    ],
    ["the image's ENTRYPOINT", entrypoint[0] === "node" ? flagsIn(entrypoint) : []],
  ])("%s gives the same", (_where, flags) => {
    expect(flags).toEqual(npmStart);
  });
});

describe("the glibc settings of the service", () => {
  const npmStart = mallocSettingsIn(startScript.split(" "));

  it("npm start sets one malloc arena and a fixed mmap threshold", () => {
    // A fixed threshold: glibc otherwise raises it after each large block freed (start-up reads the
    // bundle's chunks into large buffers) and keeps the next ones in its heap (docs/operating.md, Memory).
    expect(npmStart).toEqual(["MALLOC_ARENA_MAX=1", "MALLOC_MMAP_THRESHOLD_=131072"]);
  });

  it.each([
    ["the CLI's shebang", mallocSettingsIn(shebang.split(" "))],
    ["the image's ENV", mallocSettingsIn(imageEnv)],
  ])("%s sets the same", (_where, settings) => {
    expect(settings).toEqual(npmStart);
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
