import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createProject, createWebhook } from "../support/api-fixtures.js";
import { freePort } from "../support/ports.js";
import { startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { repoRoot } from "../support/tools.js";

// The README's first session is a script a newcomer pastes top to bottom: this runs exactly its
// blocks against the real service (the curl session, the signature check, then every command of the
// CLI transcript in docs/cli.md, whose printed output must match the page's, timestamps and ids of
// events aside).

const run = promisify(execFile);
const readme = readFileSync(path.join(repoRoot, "README.md"), "utf8");
const cliPage = readFileSync(path.join(repoRoot, "docs/cli.md"), "utf8");

/** The first block fenced with `fence` after `heading` in `page`. */
function block(heading: string, fence: string, page = readme): string {
  const section = page.indexOf(heading);
  expect(section, `heading "${heading}"`).toBeGreaterThanOrEqual(0);
  const start = page.indexOf(`${fence}\n`, section) + fence.length + 1;
  return page.slice(start, page.indexOf("```\n", start));
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

it("runs the CLI transcript and prints what docs/cli.md shows", async () => {
  const transcript = block("Continuing from the README's curl session", "```console", cliPage);
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

// After the transcript: its delivery ids count from the curl session's.
it("runs the signature check of 'Verifying a delivery' on real deliveries: valid, tampered, wrong secret", async () => {
  const receiver = await startReceiver();
  try {
    const project = await createProject(service, "verify-readme", "Verify");
    const webhook = await createWebhook(service, project, {
      url: `${receiver.url}/hooks`,
      events: ["deployment.succeeded"],
      secret: "readme-secret",
    });
    const sent = await service.api("POST", `/projects/${project}/webhooks/${webhook.id}/test`);
    expect(sent.body.success).toBe(true);
    const [delivery] = await receiver.waitFor(1);
    if (!delivery) throw new Error("no delivery arrived");

    // The README's block as a module of its own, exactly as printed, with its function exported.
    const file = path.join(mkdtempSync(path.join(tmpdir(), "readme-verify-")), "verify.mjs");
    writeFileSync(file, `${block("## Verifying a delivery", "```js")}\nexport { signatureIsValid };\n`);
    const { signatureIsValid } = await import(file);

    expect(signatureIsValid("readme-secret", delivery.body, delivery.headers)).toBe(true);
    expect(signatureIsValid("another-secret", delivery.body, delivery.headers)).toBe(false);
    expect(signatureIsValid("readme-secret", `${delivery.body} `, delivery.headers)).toBe(false);
    const { "x-webhook-signature": _, ...unsigned } = delivery.headers;
    expect(signatureIsValid("readme-secret", delivery.body, unsigned)).toBe(false);
  } finally {
    await receiver.close();
  }
});
