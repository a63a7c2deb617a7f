import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

// The external programs the chart and monitoring tests run. helm comes from the npm registry through
// scripts/fetch-k8s-tool.sh, kubernetes-validate from PyPI through scripts/kubernetes-validate.sh, so they
// are there wherever those registries answer; promtool comes from Debian's
// `prometheus` package, which .ci/run installs. Where one cannot be had (a developer machine without
// the package, or offline), the tests that need it are skipped with the reason, except in CI
// (CI=true), where a missing tool is a failure: CI must never pass by skipping.

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

export interface Tool {
  /** Absolute path or command name; undefined when unavailable. */
  path: string | undefined;
  /** Why it is unavailable (for the skip message). */
  reason: string;
}

function unavailable(reason: string): Tool {
  if (process.env.CI) throw new Error(`${reason} (CI must run these checks)`);
  console.warn(`SKIPPING: ${reason}`);
  return { path: undefined, reason };
}

let helm: Tool | undefined;
/** helm v4, fetched once into .cache/tools by scripts/fetch-k8s-tool.sh. */
export function locateHelm(): Tool {
  helm ??= (() => {
    const result = spawnSync("bash", ["scripts/fetch-k8s-tool.sh", "helm"], {
      cwd: repoRoot,
      encoding: "utf8",
      timeout: 300_000,
    });
    const path = result.stdout?.trim().split("\n").at(-1);
    if (result.status === 0 && path) return { path, reason: "" };
    return unavailable(
      `helm is unavailable: scripts/fetch-k8s-tool.sh helm failed: ${(result.stderr || String(result.error)).trim()}`,
    );
  })();
  return helm;
}

let promtool: Tool | undefined;
/** promtool from Debian's prometheus package (apt-get install prometheus). */
export function locatePromtool(): Tool {
  promtool ??= (() => {
    const result = spawnSync("promtool", ["--version"], { encoding: "utf8" });
    if (result.status === 0) return { path: "promtool", reason: "" };
    return unavailable("promtool is not installed (Debian: apt-get install prometheus)");
  })();
  return promtool;
}

let kubernetesValidate: Tool | undefined;
/** kubernetes-validate (PyPI), installed once into .cache/tools by scripts/kubernetes-validate.sh. */
export function locateKubernetesValidate(): Tool {
  kubernetesValidate ??= (() => {
    const result = spawnSync("bash", ["scripts/kubernetes-validate.sh", "--version"], {
      cwd: repoRoot,
      encoding: "utf8",
      timeout: 300_000,
    });
    if (result.status === 0)
      return { path: path.join(repoRoot, "scripts/kubernetes-validate.sh"), reason: "" };
    return unavailable(
      `kubernetes-validate is unavailable: scripts/kubernetes-validate.sh failed: ${(result.stderr || String(result.error)).trim()}`,
    );
  })();
  return kubernetesValidate;
}

export interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function run(command: string, args: string[], options: { cwd?: string } = {}): RunResult {
  const result = spawnSync(command, args, {
    cwd: options.cwd ?? repoRoot,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    timeout: 120_000,
  });
  return { status: result.status, stdout: result.stdout ?? "", stderr: result.stderr ?? "" };
}

/** A toolchain on PATH (python3, go), found by running it with `args`; `install` says how to get it. */
export function locateCommand(command: string, args: string[], install: string): Tool {
  const result = spawnSync(command, args, { encoding: "utf8" });
  if (result.status === 0) return { path: command, reason: "" };
  return unavailable(`${command} is not installed (${install})`);
}
