// What keeping the images in the ReplicaSet and ControllerRevision caches costs (rollout details,
// docs/kubernetes.md "Big clusters"): the V8 heap of 5,000 objects shaped like the big-cluster
// benchmark's, slimmed as before (no pod template) and as now (containers' names and images), three
// rounds. Run: npx tsx --expose-gc bench/cache-images.ts (about a second).
import type { V1ControllerRevision } from "@kubernetes/client-node";
import { slimObject } from "../src/operator/cache-transforms.js";
import { revisionImagesOnly } from "../src/operator/rollouts/controller-revisions.js";
import { slimReplicaSet } from "../src/operator/rollouts/replica-set-cache.js";

const n = 5000;
const template = (i: number) => ({
  metadata: { labels: { "app.kubernetes.io/name": `app-${i}`, "pod-template-hash": "5d9f7c" } },
  spec: {
    containers: [
      {
        name: "app",
        image: `registry.example/shop/app-${i}:1.4.2`,
        args: ["--port=8080"],
        env: [{ name: "LOG_LEVEL", value: "info" }],
      },
    ],
  },
});
const rs = (i: number) => ({
  apiVersion: "apps/v1",
  kind: "ReplicaSet",
  metadata: {
    name: `app-${i}-5d9f7c`,
    namespace: `big-${i % 500}`,
    uid: `uid-${i}-aaaaaaaa-bbbb`,
    resourceVersion: String(1000 + i),
    creationTimestamp: new Date(),
    annotations: { "deployment.kubernetes.io/revision": "1" },
    ownerReferences: [
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        name: `app-${i}`,
        uid: `owner-${i}-cccc`,
        controller: true,
      },
    ],
  },
  spec: { replicas: 0, selector: {}, template: template(i) },
});
const cr = (i: number) => ({
  metadata: {
    name: `db-${i}-7f8`,
    namespace: `big-${i % 500}`,
    uid: `cr-${i}`,
    ownerReferences: [{ uid: `o-${i}` }],
  },
  revision: 1,
  data: { spec: { template: { $patch: "replace", ...template(i) } } },
});
const oldSlimRs = (o: ReturnType<typeof rs>) => {
  const s = slimReplicaSet(o as never) as { spec?: unknown };
  const { spec: _s, ...rest } = s;
  return rest;
};
function heapOf(make: () => unknown[]): number {
  globalThis.gc?.();
  globalThis.gc?.();
  const before = process.memoryUsage().heapUsed;
  const kept = make();
  globalThis.gc?.();
  globalThis.gc?.();
  const after = process.memoryUsage().heapUsed;
  if (kept.length !== n) throw new Error(`made ${kept.length} objects, not ${n}`);
  return after - before;
}
const rows: [string, number][] = [];
for (let round = 0; round < 3; round++) {
  rows.push([
    "ReplicaSets, before (no template)",
    heapOf(() => Array.from({ length: n }, (_, i) => oldSlimRs(rs(i)))),
  ]);
  rows.push([
    "ReplicaSets, now (names and images)",
    heapOf(() => Array.from({ length: n }, (_, i) => slimReplicaSet(rs(i) as never))),
  ]);
  rows.push([
    "ControllerRevisions, before (data: undefined)",
    heapOf(() =>
      Array.from({ length: n }, (_, i) => ({
        ...slimObject(cr(i) as V1ControllerRevision),
        data: undefined,
      })),
    ),
  ]);
  rows.push([
    "ControllerRevisions, now (names and images)",
    heapOf(() =>
      Array.from({ length: n }, (_, i) => ({
        ...slimObject(cr(i) as V1ControllerRevision),
        data: revisionImagesOnly(cr(i) as V1ControllerRevision),
      })),
    ),
  ]);
}
for (const [what, bytes] of rows)
  console.log(`${what}: ${(bytes / 1024 / 1024).toFixed(2)} MiB for ${n}, ${Math.round(bytes / n)} B each`);
