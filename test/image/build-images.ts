import { spawnSync } from "node:child_process";
import type { TestProject } from "vitest/node";
import { repoRoot } from "../support/tools.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** webhook-operator:<version>, as `npm run image` tagged it. */
    operatorImage: string;
    /** The chart's postgres image: the official one, or the stand-in built from Debian's packages. */
    postgresImage: string;
  }
}

/** `npm run image` once for the suite, as a user runs it; its output goes to the terminal. */
export default function buildImages(project: TestProject) {
  const result = spawnSync("npm", ["run", "--silent", "image"], {
    cwd: repoRoot,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    timeout: 1_800_000,
  });
  if (result.status !== 0)
    throw new Error(`npm run image failed (exit ${result.status}): see its output above`);
  const [operatorImage, postgresImage] = result.stdout.trim().split("\n").slice(-2);
  if (!operatorImage || !postgresImage)
    throw new Error(`npm run image printed no image names: ${result.stdout}`);
  project.provide("operatorImage", operatorImage);
  project.provide("postgresImage", postgresImage);
}
