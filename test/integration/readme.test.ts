import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freePort } from "../support/ports.js";
import { startTestService, type TestService } from "../support/service.js";
import { repoRoot } from "../support/tools.js";

// The README's first session is a script a newcomer pastes top to bottom: this runs exactly its
// blocks against the real service (the curl session, then every command of the CLI transcript,
// whose printed output must match the README's, timestamps and ids of events aside).

const run = promisify(execFile);
const readme = readFileSync(path.join(repoRoot, "README.md"), "utf8");

function block(heading: string, fence: string): string {
  const section = readme.indexOf(heading);
  const start = readme.indexOf(`${fence}\n`, section) + fence.length + 1;
  return readme.slice(start, readme.indexOf("```\n", start));
}

let service: TestService;
let receiverPort: number;
beforeAll(async () => {
  service = await startTestService();
  receiverPort = await freePort();
});
afterAll(() => service.close());

const env = () => ({
  PATH: `${path.join(repoRoot, "node_modules/.bin")}:${process.env.PATH}`,
  HOME: process.env.HOME ?? "/tmp",
  KEY: service.adminKey,
  API: `${service.baseUrl}/api`,
  RECEIVER_PORT: String(receiverPort),
  WEBHOOK_OPERATOR_URL: service.baseUrl,
  WEBHOOK_OPERATOR_API_KEY: service.adminKey,
});

/** What varies from run to run: times, event ids, this run's ports (and so column widths). */
const normalise = (text: string) =>
  text
    .split("\n")
    .filter((line) => !line.startsWith("npm warn"))
    .join("\n")
    .replaceAll(service.baseUrl, "http://127.0.0.1:8080")
    .replaceAll(`127.0.0.1:${receiverPort}`, "127.0.0.1:9000")
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, "<time>")
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uuid>")
    // Table columns are as wide as this run's values (a port of five digits, say): compare the cells.
    .replace(/ {2,}/g, "  ")
    // …and a truncated cell ends where the width ran out: compare up to its last whole word.
    .replace(/[^ ]*…/g, "…")
    .trim();

it("runs the curl session: every call succeeds and the receiver gets the signed deliveries", async () => {
  // Every curl of the block must answer 2xx: --fail-with-body turns anything else into an error.
  const script = `set -euo pipefail\ncurl() { command curl --fail-with-body "$@"; }\n${block("## A first session with curl", "```sh")}`;
  const { stdout } = await run("bash", ["-c", script], { env: env(), cwd: repoRoot, timeout: 60_000 });
  expect(stdout).toMatch(/^received deployment\.succeeded 1 sha256=[0-9a-f]{64}$/m);
  expect(stdout).toMatch(/^received deployment\.succeeded 2 sha256=[0-9a-f]{64}$/m);
  expect(stdout).toContain('"success":true,"status_code":200,"error_message":null,"attempt_number":2');
});

it("runs the CLI transcript and prints what the README shows", async () => {
  const transcript = block("Continuing from the curl session above", "```console");
  const steps = transcript.split(/^\$ /m).filter((step) => step.trim() !== "");
  expect(steps.length).toBeGreaterThan(5);
  for (const step of steps) {
    const [command = "", ...expected] = step.split("\n");
    if (command.startsWith("export ")) continue; // the test sets the same variables
    const result = await run("bash", ["-c", command], { env: env(), cwd: repoRoot, timeout: 60_000 }).catch(
      (error: { stdout: string; stderr: string }) => error,
    );
    expect(normalise(`${result.stdout}${result.stderr}`), command).toBe(normalise(expected.join("\n")));
  }
}, 120_000); // eight `npx` starts: slow on a busy machine
