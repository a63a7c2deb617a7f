import { execFile } from "node:child_process";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { parse } from "yaml";
import { repoRoot } from "./tools.js";

const run = promisify(execFile);

// The images the node suite's pods run, under the names the chart's defaults and the examples ask
// for: there is no registry, so they are built here and imported into the node's containerd.

export interface NodeImages {
  /** Docker or OCI archives to import. */
  archives: string[];
  /** [name in an archive, name the kubelet will ask for] where they differ. */
  tags: [string, string][];
}

/**
 * `npm run image -- --save DIR` builds the operator's image and the chart's Postgres (the official
 * images, or where they cannot be pulled, stand-ins from Debian's packages) and saves both; the Node
 * image the Dockerfile built on is saved beside them for the example receiver (node:24-bookworm-slim).
 */
export async function buildImages(dir: string): Promise<NodeImages> {
  rmSync(dir, { recursive: true, force: true }); // archives of an earlier run would be imported too
  const built = await run("npm", ["run", "--silent", "image", "--", "--save", dir], {
    cwd: repoRoot,
    timeout: 3_600_000,
    maxBuffer: 64 << 20,
  }).catch((error: { stderr?: string }) => {
    throw new Error(`npm run image failed:\n${error.stderr?.slice(-4000)}`);
  });
  // It prints the operator's image (saved as docker.io/library/<it>, the name the chart's default
  // resolves to) and the Postgres image, which a stand-in names its own way.
  const postgres = built.stdout.trim().split("\n").at(-1) ?? "";
  const base = /building \S+ from (\S+) and /.exec(built.stderr)?.[1];
  if (!base) throw new Error(`npm run image did not say which Node image it built on:\n${built.stderr}`);
  await run(
    "bash",
    [path.join(repoRoot, "scripts/image/engine.sh"), "save", "--output", `${dir}/node.tar`, base],
    {
      timeout: 600_000,
    },
  );
  const values = parse(readFileSync(path.join(repoRoot, "charts/webhook-operator/values.yaml"), "utf8"));
  const chartPostgres = `${values.postgres.image.repository}:${values.postgres.image.tag}`;
  return {
    archives: readdirSync(dir)
      .filter((file) => file.endsWith(".tar"))
      .map((file) => path.join(dir, file)),
    tags: [
      [postgres, chartPostgres],
      [base, "node:24-bookworm-slim"],
    ],
  };
}
