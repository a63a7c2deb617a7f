import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type { TestProject } from "vitest/node";
import { buildImages } from "./images.js";
import { buildPreviousRelease } from "./previous-release.js";
import { repoRoot } from "./tools.js";

const run = promisify(execFile);
const script = (name: string) => path.join(repoRoot, "scripts/cluster", name);

/** Runs a script, failing with its own words (stderr) rather than only an exit code. */
async function step(what: string, file: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await run("bash", [file, ...args], { timeout: 3_600_000, maxBuffer: 16 << 20 });
    return stdout;
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(
      `${what} failed (${path.basename(file)} ${args.join(" ")}):\n${stderr || stdout || error}`,
    );
  }
}

/**
 * One control plane and one real node for the whole node suite, in a temporary directory: the
 * control plane without kwok (every pod must land on the real node), then scripts/cluster/node.sh,
 * then the images (`npm run image`, test/support/images.ts) imported into the node's containerd. At the end the
 * node stops, which puts the machine back, and a machine left different fails the run (the suite's
 * last file, host-restored.test.ts, asserts the same after stopping the node itself).
 * CLUSTER_DIR=<dir> reuses a running cluster and node and leaves them running.
 */
export default async function setup(project: TestProject) {
  if (process.getuid?.() !== 0)
    throw new Error("the node suite needs root: a kubelet mounts, and makes cgroups");
  const reuse = process.env.CLUSTER_DIR;
  const dir = reuse ?? (await mkdtemp(path.join(tmpdir(), "wo-node-")));
  const started = Date.now();
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  // The images are built while the control plane starts (minutes each on a first run), and before the
  // node records the machine: a build's mounts and cgroups would otherwise be in the record.
  const [images] = await Promise.all([
    // And the previous release's, for upgrade.test.ts (built once per machine, then cached).
    buildImages(path.join(repoRoot, ".cache/node-images")).then(async (images) => ({
      ...images,
      archives: [...images.archives, (await buildPreviousRelease()).imageArchive],
    })),
    step("starting the control plane", script("start.sh"), [
      dir,
      "etcd",
      "kube-apiserver",
      "kube-controller-manager",
      "kube-scheduler",
    ]),
  ]).catch(async (error) => {
    if (!reuse) await step("stopping the cluster", script("stop.sh"), [dir]).catch(() => {});
    throw error;
  });
  try {
    await step("starting the node", script("node.sh"), [dir, "start"]);
    console.log(`control plane, images and node ready in ${elapsed()} (${dir})`);
    await step("importing the images", script("node.sh"), [dir, "import", ...images.archives]);
    for (const [name, as] of images.tags)
      await step("naming an image", script("node.sh"), [dir, "tag", name, as]);
    console.log(`images imported after ${elapsed()}`);
  } catch (error) {
    if (!reuse) await step("stopping the cluster", script("stop.sh"), [dir]).catch(() => {});
    throw error;
  }
  project.provide("clusterDir", dir);
  return async () => {
    if (reuse) return;
    // Stops the node (unless host-restored.test.ts did), then the control plane; throws with what
    // differs when the machine is not as before.
    await step("stopping the cluster", script("stop.sh"), [dir]);
    await rm(dir, { recursive: true, force: true });
  };
}
