import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { eventually } from "./receiver.js";
import { repoRoot } from "./tools.js";

/**
 * The operator as users run it: `webhook-operator serve` from dist/ in a process of its own, so a
 * test can SIGKILL it. Its JSON log lines are kept for assertions (`logs`).
 */
export interface OperatorProcess {
  child: ChildProcess;
  logs: string[];
  /** Parsed log lines whose `msg` is `message`. */
  logged(message: string): Record<string, unknown>[];
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export function startOperatorProcess(env: Record<string, string>): OperatorProcess {
  const child = spawn(
    path.join(repoRoot, "node_modules/.bin/node"),
    [path.join(repoRoot, "dist/src/cli/main.js"), "serve"],
    {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? "", HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "info", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const logs: string[] = [];
  let partial = "";
  const collect = (chunk: Buffer) => {
    const lines = (partial + chunk.toString("utf8")).split("\n");
    partial = lines.pop() ?? "";
    logs.push(...lines.filter((line) => line !== ""));
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const parsed = () =>
    logs.flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  return {
    child,
    logs,
    logged: (message) => parsed().filter((line) => line.msg === message),
    async kill(signal = "SIGTERM") {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill(signal);
      await exited;
    },
  };
}

/** Waits until the process logged `message` at least `count` times. */
export function waitForLog(operator: OperatorProcess, message: string, count = 1, timeoutMs = 60_000) {
  return eventually(
    async () => (operator.logged(message).length >= count ? true : undefined),
    timeoutMs,
  ).catch(() => {
    throw new Error(`operator did not log "${message}"; its log:\n${operator.logs.slice(-30).join("\n")}`);
  });
}
