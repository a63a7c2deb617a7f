import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { verifyWebhook } from "../../src/verify.js";
import { repoRoot } from "../support/tools.js";

// docs/receivers.md prints the receivers of docs/receivers/ word for word (the files the receivers'
// test runs), each after a `<!-- file: … -->` line, and a delivery a reader can check a verifier with.

const page = readFileSync(path.join(repoRoot, "docs/receivers.md"), "utf8");
const included = new Map(
  [...page.matchAll(/<!-- file: (\S+) -->\n```\w+\n([\s\S]*?)```\n/g)].map((match) => [match[1], match[2]]),
);

describe("docs/receivers.md", () => {
  const files = readdirSync(path.join(repoRoot, "docs/receivers"), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(repoRoot, path.join(entry.parentPath, entry.name)));

  it.each(files)("prints %s exactly as the file is", (file) => {
    const text = readFileSync(path.join(repoRoot, file), "utf8");
    expect(included.get(file), `copy ${file} into its block of docs/receivers.md`).toBe(text);
  });

  it("includes no file that is not there", () => {
    expect([...included.keys()].sort()).toEqual([...files].sort());
  });

  it("shows a delivery whose signature is right for the secret s3cret", () => {
    const request = /```http\n([\s\S]*?)\n\n(.*)\n```/.exec(page);
    const headers = Object.fromEntries(
      (request?.[1] ?? "")
        .split("\n")
        .slice(1)
        .map((line) => line.split(": ") as [string, string]),
    );
    const envelope = verifyWebhook({
      secret: "s3cret",
      body: request?.[2] ?? "",
      headers,
      toleranceSeconds: Number.POSITIVE_INFINITY,
    });
    expect(envelope.event_type).toBe(headers["X-Webhook-Event"]);
  });
});
