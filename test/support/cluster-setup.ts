import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type { TestProject } from "vitest/node";
import { kubectlAt } from "./cluster.js";
import { repoRoot } from "./tools.js";

const run = promisify(execFile);

/**
 * One real control plane for the whole cluster suite: scripts/cluster/start.sh in a temporary
 * directory (building the binaries first if they are not cached), the Webhook CRD applied, stopped
 * and removed at the end. CLUSTER_DIR=<dir of a running cluster> reuses one instead (fast iteration:
 * `bash scripts/cluster/start.sh /tmp/c` once, then `CLUSTER_DIR=/tmp/c npm run test:cluster`).
 */
export default async function setup(project: TestProject) {
  const reuse = process.env.CLUSTER_DIR;
  const dir = reuse ?? (await mkdtemp(path.join(tmpdir(), "wo-cluster-")));
  const started = Date.now();
  try {
    await run("bash", [path.join(repoRoot, "scripts/cluster/start.sh"), dir], { timeout: 3_600_000 });
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(`The control plane did not start (scripts/cluster/start.sh ${dir}): ${stderr ?? error}`);
  }
  console.log(`control plane up in ${((Date.now() - started) / 1000).toFixed(1)} s (${dir})`);
  const kubeconfig = path.join(dir, "kubeconfig");
  await kubectlAt(kubeconfig, ["apply", "--server-side", "-f", path.join(repoRoot, "crds")]);
  await kubectlAt(kubeconfig, ["wait", "--for=condition=Established", "crd/webhooks.webhook-operator.io"]);
  project.provide("clusterDir", dir);
  return async () => {
    if (reuse) return;
    await run("bash", [path.join(repoRoot, "scripts/cluster/stop.sh"), dir]);
    await rm(dir, { recursive: true, force: true });
  };
}
