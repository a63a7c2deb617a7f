import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useCluster } from "../support/cluster.js";

// The node suite's last file (vitest.node.config.ts runs it after the others): the real node stops,
// and the machine must be as scripts/cluster/host-state.sh saw it before the node started (sysctls,
// iptables and nftables rules, nfacct counters, mounts, cgroups, interfaces, routes, network
// namespaces, files under /var, /run and /opt, processes). These are developers' and CI's machines.

const cluster = useCluster();
const nodeDir = path.join(cluster.dir, "node");

/** `node.sh check`'s verdict: what differs from before, or "" when nothing does. */
const differences = () =>
  cluster.node(["check"]).then(
    () => "",
    (error: { stderr?: string }) => error.stderr ?? String(error),
  );

describe("the machine after the node stops", () => {
  it("is as it was before the node started", async () => {
    await cluster.node(["stop"]).catch((error: { stderr?: string }) => {
      throw new Error(`node.sh stop left the machine changed:\n${error.stderr}`);
    });
    const before = readFileSync(path.join(nodeDir, "host-before.txt"), "utf8");
    expect(readFileSync(path.join(nodeDir, "host-after.txt"), "utf8")).toBe(before);
  });

  // The comparison is only worth something if it sees what a node leaves behind.
  const firstAbsentPath = () =>
    /^absent (\S+)$/m.exec(readFileSync(path.join(nodeDir, "host-before.txt"), "utf8"))?.[1] ?? "";
  const panic = "/proc/sys/kernel/panic";
  it.each([
    {
      leftover: "a directory the kubelet makes",
      make: () => mkdirSync(path.join(firstAbsentPath(), "left-behind"), { recursive: true }),
      undo: () => rmSync(firstAbsentPath(), { recursive: true }),
      seen: () => `+${firstAbsentPath()}/left-behind`,
    },
    {
      leftover: "a sysctl the kubelet sets",
      make: () => writeFileSync(panic, String(Number(readFileSync(panic, "utf8")) + 7)),
      undo: () => writeFileSync(panic, String(Number(readFileSync(panic, "utf8")) - 7)),
      seen: () => "+kernel.panic = ",
    },
  ])("would show $leftover", async ({ make, undo, seen }) => {
    expect(await differences()).toBe("");
    make();
    try {
      expect(await differences()).toContain(seen());
    } finally {
      undo();
    }
    expect(await differences()).toBe("");
  });
});
