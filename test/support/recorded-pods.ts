import type { CoreV1Event, V1ContainerStatus, V1Pod, V1PodCondition } from "@kubernetes/client-node";
import type { NewPods, PodSource } from "../../src/operator/rollouts/pod-source.js";

// Pods of a stalled rollout as the kubelet (v1.34, containerd) and the scheduler report them in
// `kubectl get pod -o json`, and the kubelet's Events of them: one pod per cause the diagnosis knows.
// The messages are the real ones, taken from such pods.

const at = new Date("2026-11-29T09:00:00Z");
const later = (seconds: number) => new Date(at.getTime() + seconds * 1000);

const condition = (type: string, status: string, extra: Partial<V1PodCondition> = {}): V1PodCondition => ({
  type,
  status,
  lastTransitionTime: at,
  lastProbeTime: undefined as unknown as Date,
  ...extra,
});

const notReady = (container: string) => [
  condition("PodReadyToStartContainers", "True"),
  condition("Initialized", "True"),
  condition("Ready", "False", {
    reason: "ContainersNotReady",
    message: `containers with unready status: [${container}]`,
  }),
  condition("ContainersReady", "False", {
    reason: "ContainersNotReady",
    message: `containers with unready status: [${container}]`,
  }),
  condition("PodScheduled", "True"),
];

/** A pod of ReplicaSet web-7c9d8f6b5 (Deployment "web" in namespace "shop"). */
export function webPod(suffix: string, status: V1Pod["status"]): V1Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: `web-7c9d8f6b5-${suffix}`,
      namespace: "shop",
      uid: `pod-${suffix}`,
      labels: { app: "web", "pod-template-hash": "7c9d8f6b5" },
      ownerReferences: [
        {
          apiVersion: "apps/v1",
          kind: "ReplicaSet",
          name: "web-7c9d8f6b5",
          uid: "rs-uid",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      creationTimestamp: at,
    },
    spec: { containers: [{ name: "web", image: "registry.example.com/shop/web:2.0.0" }], nodeName: "node-0" },
    status,
  };
}

const container = (name: string, fields: Partial<V1ContainerStatus>): V1ContainerStatus => ({
  name,
  image: "registry.example.com/shop/web:2.0.0",
  imageID: "",
  ready: false,
  restartCount: 0,
  started: false,
  lastState: {},
  ...fields,
});

const missingImage =
  'Back-off pulling image "registry.example.com/shop/web:2.0.0": ErrImagePull: failed to pull and unpack ' +
  'image "registry.example.com/shop/web:2.0.0": failed to resolve reference ' +
  '"registry.example.com/shop/web:2.0.0": registry.example.com/shop/web:2.0.0: not found';

export const recorded = {
  imagePullBackOff: webPod("pull1", {
    phase: "Pending",
    conditions: notReady("web"),
    hostIP: "10.0.0.4",
    podIP: "10.244.1.17",
    startTime: at,
    containerStatuses: [
      container("web", { state: { waiting: { reason: "ImagePullBackOff", message: missingImage } } }),
    ],
  }),
  crashLoop: webPod("crash1", {
    phase: "Running",
    conditions: notReady("web"),
    startTime: at,
    containerStatuses: [
      container("web", {
        restartCount: 3,
        state: {
          waiting: {
            reason: "CrashLoopBackOff",
            message: "back-off 40s restarting failed container=web pod=web-7c9d8f6b5-crash1_shop(pod-crash1)",
          },
        },
        lastState: {
          terminated: {
            exitCode: 1,
            reason: "Error",
            startedAt: later(50),
            finishedAt: later(51),
            containerID: "containerd://4f1c0e",
          },
        },
      }),
    ],
  }),
  crashLoopWithMessage: webPod("crash2", {
    phase: "Running",
    conditions: notReady("web"),
    startTime: at,
    containerStatuses: [
      container("web", {
        restartCount: 2,
        state: {
          waiting: {
            reason: "CrashLoopBackOff",
            message: "back-off 20s restarting failed container=web pod=web-7c9d8f6b5-crash2_shop(pod-crash2)",
          },
        },
        lastState: {
          terminated: {
            exitCode: 78,
            reason: "Error",
            message: "config: DATABASE_URL is not set\nconnecting with password=hunter2 failed\n",
            startedAt: later(30),
            finishedAt: later(31),
            containerID: "containerd://77ab12",
          },
        },
      }),
    ],
  }),
  missingKey: webPod("config1", {
    phase: "Pending",
    conditions: notReady("web"),
    startTime: at,
    containerStatuses: [
      container("web", {
        state: {
          waiting: {
            reason: "CreateContainerConfigError",
            message: "couldn't find key LOG_LEVEL in ConfigMap shop/web-config",
          },
        },
      }),
    ],
  }),
  unschedulable: webPod("cpu1", {
    phase: "Pending",
    conditions: [
      condition("PodScheduled", "False", {
        reason: "Unschedulable",
        message:
          "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: " +
          "1 No preemption victims found for incoming pod.",
      }),
    ],
    qosClass: "Burstable",
  }),
  probeFailing: webPod("probe1", {
    phase: "Running",
    conditions: notReady("web"),
    startTime: at,
    containerStatuses: [container("web", { started: true, state: { running: { startedAt: later(2) } } })],
  }),
  ready: webPod("ok1", {
    phase: "Running",
    conditions: [
      condition("Ready", "True"),
      condition("ContainersReady", "True"),
      condition("PodScheduled", "True"),
    ],
    startTime: at,
    containerStatuses: [
      container("web", { ready: true, started: true, state: { running: { startedAt: later(2) } } }),
    ],
  }),
};

/** A kubelet Event of a pod, as `kubectl get events -o json` shows it (core/v1, aggregated). */
export function podEvent(
  pod: V1Pod,
  fields: {
    type: string;
    reason: string;
    message: string;
    count?: number;
    seconds: number;
    container?: string;
  },
): CoreV1Event {
  return {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: `${pod.metadata?.name}.18b2${fields.seconds}`, namespace: "shop" },
    involvedObject: {
      apiVersion: "v1",
      kind: "Pod",
      name: pod.metadata?.name,
      namespace: "shop",
      uid: pod.metadata?.uid,
      ...(fields.container && { fieldPath: `spec.containers{${fields.container}}` }),
    },
    type: fields.type,
    reason: fields.reason,
    message: fields.message,
    count: fields.count ?? 1,
    firstTimestamp: later(1),
    lastTimestamp: later(fields.seconds),
    source: { component: "kubelet", host: "node-0" },
    reportingComponent: "kubelet",
    reportingInstance: "node-0",
  };
}

export const probeEvent = podEvent(recorded.probeFailing, {
  type: "Warning",
  reason: "Unhealthy",
  message: "Readiness probe failed: HTTP probe failed with statuscode: 503",
  count: 14,
  seconds: 70,
  container: "web",
});

/**
 * What a diagnosis reads, from recorded objects: the pods the selection owns, their events, logs by
 * "pod/container". Counts each read, as the API server would see them.
 */
export function recordedPods(
  pods: V1Pod[],
  events: CoreV1Event[] = [],
  logs: Record<string, string[]> = {},
): PodSource & { reads: string[]; pods_: V1Pod[] } {
  const reads: string[] = [];
  const source = {
    reads,
    pods_: pods,
    async pods(selection: NewPods) {
      reads.push("pods");
      return source.pods_.filter((pod) => selection.owns(pod));
    },
    async events(_namespace: string, pod: string) {
      reads.push(`events ${pod}`);
      return events.filter((event) => event.involvedObject.name === pod);
    },
    async logTail(where: { pod: string; container: string }, lines: number) {
      reads.push(`log ${where.pod}`);
      return logs[`${where.pod}/${where.container}`]?.slice(-lines);
    },
  };
  return source;
}

export const noPods = recordedPods([]);

/** The new pods of Deployment "web" at revision web-7c9d8f6b5. */
export const webNewPods: NewPods = {
  namespace: "shop",
  labelSelector: "app=web,pod-template-hash=7c9d8f6b5",
  owns: (pod) => pod.metadata?.ownerReferences?.some((o) => o.name === "web-7c9d8f6b5") ?? false,
};
