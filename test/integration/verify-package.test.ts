import { execFile } from "node:child_process";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
import { repoRoot } from "../support/tools.js";

// `webhook-operator/verify` as a user's project sees it: the package's export, built into dist with its
// declarations, resolved by name (a package may import itself by its name, which stands in for an
// installed copy here), with nothing of the service behind it.

const run = promisify(execFile);
const consumerDir = path.join(repoRoot, ".cache/verify-consumer");
afterAll(() => rm(consumerDir, { recursive: true, force: true }));

it("imports nothing but node:crypto", async () => {
  const built = await readFile(path.join(repoRoot, "dist/src/verify.js"), "utf8");
  expect([...built.matchAll(/^import .* from "([^"]+)";$/gm)].map((match) => match[1])).toEqual([
    "node:crypto",
  ]);
});

it("is typed for TypeScript users: the envelope narrows by event type, misuse does not compile", async () => {
  await mkdir(consumerDir, { recursive: true });
  await writeFile(
    path.join(consumerDir, "consumer.ts"),
    `import { verifyWebhook, WebhookVerificationError } from "webhook-operator/verify";
export function handle(body: Buffer, headers: Headers): string | null {
  try {
    const event = verifyWebhook({ secret: "s", body, headers, toleranceSeconds: 60 });
    if (event.event_type === "deployment.failed") return event.payload.error_message;
    return event.id;
  } catch (error) {
    if (error instanceof WebhookVerificationError && error.reason === "bad_signature") return null;
    throw error;
  }
}
// @ts-expect-error a parsed body is not the raw body
verifyWebhook({ secret: "s", body: { id: "x" }, headers: {} });
// @ts-expect-error no such failure
export const reason: WebhookVerificationError["reason"] = "expired";
`,
  );
  const tsc = path.join(repoRoot, "node_modules/.bin/tsc");
  const options = [
    "--ignoreConfig",
    "--noEmit",
    "--strict",
    "--module",
    "nodenext",
    "--target",
    "es2023",
    "--types",
    "node",
  ];
  const result = await run(tsc, [...options, path.join(consumerDir, "consumer.ts")], { cwd: repoRoot }).catch(
    (error: { stdout: string }) => ({ stdout: error.stdout }),
  );
  expect(result.stdout).toBe("");
});

it("runs from its name in a Node process", async () => {
  const script = `import("webhook-operator/verify").then((m) => console.log(Object.keys(m).sort().join(",")))`;
  const { stdout } = await run(process.execPath, ["-e", script], { cwd: repoRoot });
  expect(stdout.trim()).toBe("WebhookVerificationError,verifyWebhook");
});
