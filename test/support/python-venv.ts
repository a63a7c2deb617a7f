import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { locateCommand, repoRoot } from "./tools.js";

// The official Python libraries of the delivery protocols (CloudEvents, Standard Webhooks), pinned, in a
// venv under .cache/ made on first use from PyPI, as scripts/fuzz-api.sh makes its own.

const requirements = ["cloudevents==2.2.0", "standardwebhooks==1.1.0"];
const venv = path.join(repoRoot, ".cache", "formats-receivers");
const run = promisify(execFile);

/** The venv's python, made if missing; undefined (the caller skips) when the machine has no python3. */
export async function protocolPython(): Promise<string | undefined> {
  if (locateCommand("python3", ["--version"], "Debian: apt-get install python3").path === undefined)
    return undefined;
  const python = path.join(venv, "bin", "python");
  if (!existsSync(path.join(venv, ".installed"))) {
    await run("python3", ["-m", "venv", venv]);
    await run(path.join(venv, "bin", "pip"), ["install", "--quiet", ...requirements], { timeout: 300_000 });
    await run("touch", [path.join(venv, ".installed")]);
  }
  return python;
}
