// The API description exactly as /api/docs serves it, written from the code (the real app, whose
// database is never connected and whose delivery engine never starts) to .cache/openapi.json, then
// linted by Spectral (ruleset spectral:oas, .spectral.yaml) and Redocly (recommended, redocly.yaml).
// Any problem of any severity fails. `npm run lint:openapi`, part of `npm test`.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { loadConfig } from "../src/app/config.js";
import { createApp } from "../src/app/http-app.js";
import { createPool } from "../src/db/pool.js";
import { destinationPolicyOf } from "../src/delivery-engine/destination-policy.js";
import { createDeliveryEngine } from "../src/delivery-engine/engine.js";
import { createLogger } from "../src/logger.js";
import { SecretBox } from "../src/secrets/secret-box.js";
import { autoDisablePolicy } from "../src/webhooks/auto-disable.js";

const root = path.resolve(import.meta.dirname, "..");
const documentPath = path.join(root, ".cache/openapi.json");

async function servedDocument(): Promise<unknown> {
  const config = loadConfig({ LOG_LEVEL: "silent" });
  const logger = createLogger("silent");
  const databaseUrl = "postgres://unused@127.0.0.1:1/unused";
  const pool = createPool(databaseUrl, 1);
  const engine = createDeliveryEngine({
    pool,
    databaseUrl,
    settings: config.delivery,
    openSecret: () => "",
    outcomePolicy: autoDisablePolicy,
    logger,
  });
  const app = createApp({
    pool,
    logger,
    engine,
    dashboard: false,
    destinationPolicy: destinationPolicyOf(config.delivery),
    webhooksPerProjectLimit: config.webhooksPerProjectLimit,
    // Never used: the document is written without a request.
    secrets: new SecretBox([randomBytes(32)]),
  });
  const server = createServer(app).listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/docs`);
    return await response.json();
  } finally {
    server.close();
    await engine.stop(0);
    await pool.end();
  }
}

function run(command: string, args: string[]): { status: number | null; stdout: string; output: string } {
  const result = spawnSync(path.join(root, "node_modules/.bin", command), args, {
    cwd: root,
    encoding: "utf8",
  });
  return { status: result.status, stdout: result.stdout, output: `${result.stdout}${result.stderr}`.trim() };
}

/** Spectral fails on any finding (--fail-severity hint). */
function spectral(): string | undefined {
  const options = ["--ruleset", ".spectral.yaml", "--fail-severity", "hint", "--display-only-failures"];
  const { status, output } = run("spectral", ["lint", ...options, documentPath]);
  return status === 0 ? undefined : output;
}

/** Redocly fails on errors only: its warnings are counted from its JSON report. */
function redocly(): string | undefined {
  const { status, stdout } = run("redocly", [
    "lint",
    "--config",
    "redocly.yaml",
    "--format",
    "json",
    documentPath,
  ]);
  const report = JSON.parse(stdout) as {
    problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
  };
  if (status === 0 && report.problems.length === 0) return undefined;
  return report.problems
    .map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ""}: ${p.message}`)
    .join("\n");
}

mkdirSync(path.dirname(documentPath), { recursive: true });
writeFileSync(documentPath, `${JSON.stringify(await servedDocument(), null, 2)}\n`);
let clean = true;
for (const [name, lint] of [
  ["Spectral (spectral:oas)", spectral],
  ["Redocly (recommended)", redocly],
] as const) {
  const problems = lint();
  console.log(problems === undefined ? `${name}: no problems` : `${name} found problems:\n${problems}`);
  if (problems !== undefined) clean = false;
}
process.exit(clean ? 0 : 1);
