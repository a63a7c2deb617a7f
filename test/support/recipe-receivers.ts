import { execFile, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "./tools.js";

// The receivers of docs/receivers.md, run as a user runs them: their own process, their own language,
// WEBHOOK_SECRET and PORT from the environment. PORT=0 lets each take a free port, which it prints.

export interface RecipeReceiver {
  url: string;
  stop(): Promise<void>;
}

export async function startRecipe(command: string, args: string[], secret: string): Promise<RecipeReceiver> {
  const child = spawn(command, args, {
    cwd: repoRoot,
    env: { ...process.env, WEBHOOK_SECRET: secret, PORT: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const port = await new Promise<number>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const match = /listening on port (\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.once("error", reject);
    child.once("exit", (code) =>
      reject(new Error(`${command} ${args.join(" ")} exited (${code}):\n${output}`)),
    );
  });
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill();
      await exited;
    },
  };
}

/** docs/receivers/go/main.go built with `go build` (the Go build cache makes a rebuild a link). */
export async function buildGoRecipe(): Promise<{ binary: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), "go-receiver-"));
  const binary = path.join(dir, "receiver");
  await promisify(execFile)("go", ["build", "-o", binary, "docs/receivers/go/main.go"], {
    cwd: repoRoot,
    timeout: 300_000,
  });
  return { binary, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * A man in the middle: forwards `/<port>/<path>` to the receiver on that loopback port with the body
 * changed (one field of the envelope, same length) and every header as it came.
 */
export async function startTamperingProxy(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks)
      .toString("utf8")
      .replace('"environment":"test"', '"environment":"prod"');
    const [, port, ...rest] = (req.url ?? "/").split("/");
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(
        ([name]) => name.startsWith("x-webhook-") || name === "content-type",
      ),
    ) as Record<string, string>;
    const answer = await fetch(`http://127.0.0.1:${port}/${rest.join("/")}`, {
      method: "POST",
      headers,
      body,
    });
    res.writeHead(answer.status, { "content-type": "text/plain" }).end(await answer.text());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
