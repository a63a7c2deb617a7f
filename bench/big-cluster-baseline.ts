// The big-cluster benchmark's baseline: an earlier commit built in a temporary git worktree (sharing
// this checkout's node_modules: the dependencies are the same), removed again at the end.
import { execFile } from "node:child_process";
import { mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "../test/support/tools.js";
import type { Build } from "./big-cluster-operator.js";

const run = promisify(execFile);

export async function buildAt(commit: string): Promise<{ build: Build; remove(): Promise<void> }> {
  const dir = path.join(await mkdtemp(path.join(tmpdir(), "wo-bench-baseline-")), "tree");
  await run("git", ["-C", repoRoot, "worktree", "add", "--detach", dir, commit]);
  const remove = async () => {
    await run("git", ["-C", repoRoot, "worktree", "remove", "--force", dir]).catch(() => {});
    await rm(path.dirname(dir), { recursive: true, force: true });
  };
  try {
    await symlink(path.join(repoRoot, "node_modules"), path.join(dir, "node_modules"));
    await run(process.execPath, ["scripts/build.ts"], { cwd: dir, timeout: 600_000 });
  } catch (error) {
    await remove();
    throw error;
  }
  return { build: { name: commit, entry: path.join(dir, "dist/server/main.js") }, remove };
}
