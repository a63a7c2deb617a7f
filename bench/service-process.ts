import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../test/support/ports.js";
import { startCommand } from "../test/support/start-command.js";
import { benchServiceEnv, sleep } from "./fixtures.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const serviceEntry = path.join(repoRoot, "dist/server/main.js");

/** The built service in a process of its own, as `npm start` runs it, without a cluster. */
export interface ServiceProcess {
  pid: number;
  url: string;
  stop(): Promise<void>;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

/** Starts `<npm start's settings> node <its flags> dist/server/main.js serve` against `databaseUrl`; resolves when ready. */
export async function startServiceProcess(
  databaseUrl: string,
  settings: Record<string, string>,
  /** Another build's entry (bench/big-cluster.ts runs an earlier commit's beside this one). */
  entry = serviceEntry,
): Promise<ServiceProcess> {
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run npm run build first`);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const start = await startCommand();
  const child = spawn(process.execPath, [...start.flags, entry, "serve"], {
    env: {
      ...start.env,
      PATH: process.env.PATH,
      ...benchServiceEnv,
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      KUBERNETES: "false",
      ...settings,
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  try {
    for (let attempt = 0; ; attempt++) {
      const ready = await fetch(`${url}/readyz`).then(
        (response) => response.ok,
        () => false,
      );
      if (ready) break;
      if (attempt > 300 || child.exitCode !== null) throw new Error("the service did not become ready");
      await sleep(100);
    }
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  return { pid: child.pid as number, url, stop: () => stopChild(child) };
}
