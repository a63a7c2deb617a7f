import { readFile } from "node:fs/promises";
import path from "node:path";
import { repoRoot } from "./tools.js";

/**
 * The environment settings and Node flags `npm start` runs the service with (package.json; the CLI
 * and the image give the same, test/unit/node-flags.test.ts), so that a benchmark's or a reliability
 * scenario's process is the one users run: without them V8 lets its young generation grow to 128 MiB
 * under load, and memory figures say nothing about the product.
 */
export async function startCommand(): Promise<{ env: Record<string, string>; flags: string[] }> {
  const scripts = JSON.parse(await readFile(path.join(repoRoot, "package.json"), "utf8")).scripts;
  const [, settings, flags] =
    /^((?:[A-Z_]+=\S+ )*)node ((?:--\S+ )*)dist\/server\/main\.js serve$/.exec(scripts.start) ?? [];
  if (settings === undefined || flags === undefined)
    throw new Error(`package.json's start is not "[VAR=value …] node [flags] dist/server/main.js serve"`);
  const words = (text: string) => text.split(" ").filter(Boolean);
  return {
    env: Object.fromEntries(words(settings).map((setting) => setting.split("=", 2) as [string, string])),
    flags: words(flags),
  };
}
