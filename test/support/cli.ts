import { spawn } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

// Runs the built `webhook-operator` binary as users run it, for the CLI tests.

const root = fileURLToPath(new URL("../..", import.meta.url));
const bin = path.join(root, "dist/server/main.js");

/** The binary under test must be built from the current sources, or these tests prove nothing. */
export function assertBuilt(): void {
  if (!existsSync(bin)) throw new Error("dist/server/main.js is missing: run `npm run build` first.");
  const sources = ["src/cli", "src/client"].flatMap((dir) =>
    readdirSync(path.join(root, dir), { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".ts"))
      .map((file) => path.join(dir, file)),
  );
  for (const source of [...sources, "src/event-types.ts", "src/version.ts"]) {
    const built = path.join(root, "dist", source.replace(/\.ts$/, ".js"));
    if (!existsSync(built) || statSync(built).mtimeMs < statSync(path.join(root, source)).mtimeMs) {
      throw new Error(`${source} changed since the last build: run \`npm run build\` first.`);
    }
  }
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  env?: Record<string, string | undefined>;
  input?: string;
}

/**
 * Runs the binary with the service's address and key in an otherwise minimal environment; `env`
 * overrides them (undefined removes a variable). stdin gets `input`, then EOF.
 */
export function runCli(
  target: { baseUrl: string; apiKey: string },
  args: string[],
  options: CliOptions = {},
) {
  const env = Object.fromEntries(
    Object.entries({
      PATH: process.env.PATH,
      WEBHOOK_OPERATOR_URL: target.baseUrl,
      WEBHOOK_OPERATOR_API_KEY: target.apiKey,
      ...options.env,
    }).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  const child = spawn(process.execPath, [bin, ...args], { env });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  child.stdin.end(options.input ?? "");
  return new Promise<CliResult>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
