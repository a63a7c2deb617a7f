// What the rollout diagnosis costs the operator in memory (docs/kubernetes.md, "Why a rollout
// failed"): the state it keeps per stalled rollout, and what one look holds while it runs (a list of
// pods as the API server sends them, parsed). Run: node --expose-gc --import tsx bench/rollout-diagnosis.ts

import { podsPerLook } from "../src/operator/rollouts/pod-source.js";
import { lookTiming, RolloutDiagnosis } from "../src/operator/rollouts/rollout-diagnosis.js";
import { recorded, recordedPods, webNewPods } from "../test/support/recorded-pods.js";

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc");
const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const rollouts = Number(process.env.ROLLOUTS ?? 5_000);
// The defaults of app/config.ts (not imported: its imports reach the HTTP client, which this needs not).
const settings = {
  failFast: true,
  failFastAfterSeconds: 120,
  logLines: 20,
  redactWords: ["password", "token"],
};
let now = 0;
const source = recordedPods([recorded.imagePullBackOff]);
const diagnosis = new RolloutDiagnosis(source, settings, () => now);
const before = heap();
for (let i = 0; i < rollouts; i++)
  await diagnosis.diagnose(`uid-${i}`, "1", { phase: "progressing" }, () => webNewPods);
now = lookTiming.delayMs;
for (let i = 0; i < rollouts; i++)
  await diagnosis.diagnose(`uid-${i}`, "1", { phase: "progressing" }, () => webNewPods);
const kept = heap() - before;
// Still in use after the measurement, so that the collector cannot free it before it.
const tracked = (diagnosis as unknown as { seen: Map<string, unknown> }).seen.size;
console.log(
  `${tracked} stalled rollouts, each looked at once: ${(kept / 2 ** 20).toFixed(2)} MiB kept, ${Math.round(kept / rollouts)} bytes each`,
);

// A look's transient: a full page of pods as the kubelet reports them, with the server-side apply
// bookkeeping (managedFields) every real pod carries, as JSON text and then parsed.
const managedFields = Array.from({ length: 4 }, (_, i) => ({
  manager: ["kube-controller-manager", "kubelet", "kube-scheduler", "kubectl"][i],
  operation: "Update",
  apiVersion: "v1",
  time: "2026-11-29T09:00:00Z",
  fieldsType: "FieldsV1",
  fieldsV1: Object.fromEntries(Array.from({ length: 40 }, (_, j) => [`f:field${j}`, { ".": {} }])),
}));
const pod = {
  ...recorded.crashLoopWithMessage,
  metadata: { ...recorded.crashLoopWithMessage.metadata, managedFields },
};
const list = JSON.stringify({ kind: "PodList", items: Array.from({ length: podsPerLook }, () => pod) });
const beforeParse = heap();
const parsed = JSON.parse(list);
const held = heap() - beforeParse;
console.log(
  `one look's page of ${podsPerLook} pods: ${(list.length / 1024).toFixed(0)} KiB of JSON, ${(held / 2 ** 20).toFixed(2)} MiB parsed (${parsed.items.length} pods)`,
);
console.log(
  `reads made: ${source.reads.length} (one pod list per look; a look that finds the pods' status enough asks nothing more)`,
);
