import { type ChildProcessByStdio, spawn } from "node:child_process";
import type { Readable } from "node:stream";
import { assertBuilt } from "./cli.js";
import { repoRoot } from "./tools.js";
import { waitUntil } from "./wait.js";

// The operator as users run it outside a cluster: `node dist/server/main.js serve` with a kubeconfig,
// in a process of its own (so a test can SIGKILL it), its JSON log kept for the test to read.

export interface OperatorProcess {
  url: string;
  /** The whole log so far (stdout and stderr, pino JSON lines). */
  log(): string;
  /** Parsed log lines whose `msg` is `message`. */
  logged(message: string): Record<string, unknown>[];
  /**
   * The log lines that report a refused API call (403 Forbidden), quotes and escapes removed
   * ("leases.coordination.k8s.io x is forbidden: User system:serviceaccount:…"): empty when RBAC
   * allowed everything.
   */
  forbidden(): string[];
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
  /** Sends `signal` (SIGKILL: no shutdown at all) and waits for the exit. */
  kill(signal: NodeJS.Signals): Promise<void>;
}

/** Starts the operator and waits until it listens. */
export async function startOperatorProcess(env: Record<string, string>): Promise<OperatorProcess> {
  assertBuilt();
  const child: ChildProcessByStdio<null, Readable, Readable> = spawn(
    process.execPath,
    ["dist/server/main.js", "serve"],
    {
      cwd: repoRoot,
      env: { PATH: process.env.PATH, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "debug", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await waitUntil(
    "the operator's listening line with its URL",
    async () => {
      if (child.exitCode !== null) throw new Error(`the operator exited with ${child.exitCode}:\n${output}`);
      return /"url":"(http:\/\/[^"]+)"/.exec(output)?.[1];
    },
    { timeoutMs: 30_000 },
  );
  const parsed = () =>
    output.split("\n").flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  return {
    url,
    log: () => output,
    logged: (message) => parsed().filter((line) => line.msg === message),
    forbidden: () => output.split("\n").flatMap(refusal),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return exited;
    },
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** Waits until the process logged `message` at least `count` times. */
export function waitForLog(operator: OperatorProcess, message: string, count = 1, timeoutMs = 60_000) {
  return waitUntil(
    `${count} "${message}" lines in the operator's log`,
    async () => (operator.logged(message).length >= count ? true : undefined),
    { timeoutMs: timeoutMs },
  ).catch(() => {
    throw new Error(`the operator did not log "${message}"; its log ends:\n${operator.log().slice(-3_000)}`);
  });
}

// client-node's ApiException message holds "HTTP-Code: 403" and the Status body, JSON in a JSON string
// in the log line: flattened, the API server's own sentence reads plainly.
function refusal(line: string): string[] {
  const flat = line.replace(/[\\"]/g, "");
  return /HTTP-Code: 403|\bis forbidden\b|reason:Forbidden/.test(flat) ? [flat] : [];
}
