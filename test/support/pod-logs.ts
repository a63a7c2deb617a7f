import { type ChildProcess, spawn } from "node:child_process";
import type { Cluster } from "./cluster.js";
import { pathWithTools } from "./node-cluster.js";

// Every log line of every pod of a selector, from each pod's start to its end, including pods that a
// rolling update replaces meanwhile: `kubectl logs -f` per pod as soon as its container runs, checked
// every second. A replaced pod's last lines (its shutdown) are kept, which a later `kubectl logs` could
// no longer read once the pod is gone.

interface PodState {
  metadata: { name: string };
  spec: { containers: { name: string; image: string }[] };
  status: { containerStatuses?: { name: string; state?: { running?: unknown; terminated?: unknown } }[] };
}

export interface PodLog {
  pod: string;
  image: string;
  text: string;
}

export function followPodLogs(cluster: Cluster, namespace: string, selector: string, container: string) {
  const logs = new Map<string, PodLog>();
  const children: ChildProcess[] = [];
  const env = { ...process.env, PATH: pathWithTools() };
  let running = true;
  const watching = (async () => {
    while (running) {
      const { items } = JSON.parse(
        await cluster.kubectl(["-n", namespace, "get", "pods", "-l", selector, "-o", "json"]),
      ) as { items: PodState[] };
      for (const pod of items) {
        const name = pod.metadata.name;
        const status = pod.status.containerStatuses?.find((c) => c.name === container);
        if (logs.has(name) || !(status?.state?.running || status?.state?.terminated)) continue;
        const log: PodLog = {
          pod: name,
          image: pod.spec.containers.find((c) => c.name === container)?.image ?? "",
          text: "",
        };
        logs.set(name, log);
        const child = spawn(
          "kubectl",
          ["--kubeconfig", cluster.kubeconfigPath, "-n", namespace, "logs", "-f", name, "-c", container],
          { env, stdio: ["ignore", "pipe", "pipe"] },
        );
        child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (log.text += chunk));
        children.push(child);
      }
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  })();
  return {
    /** Stops following (the pods' streams end) and resolves with each pod's log. */
    async stop(): Promise<PodLog[]> {
      running = false;
      await watching;
      for (const child of children) child.kill();
      return [...logs.values()];
    },
  };
}

/** The lines of a pino JSON log at level error (50) or above, and any line that is not the JSON log (a crash's). */
export function errorLines(text: string): string[] {
  return text.split("\n").filter((line) => {
    if (!line.trim()) return false;
    try {
      return ((JSON.parse(line) as { level?: number }).level ?? 0) >= 50;
    } catch {
      return true;
    }
  });
}
