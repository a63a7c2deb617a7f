import type { CoreV1Api, CoreV1Event, V1Pod } from "@kubernetes/client-node";
import { within } from "../../abortable.js";
import { describeError, type Logger } from "../../logger.js";
import { isForbidden } from "../kube-errors.js";
import { logBytes, type NewPods, type PodResource, type PodSource, podsPerLook } from "./pod-source.js";

// The three reads of a rollout diagnosis, each a request (no informer: the operator watches thousands
// of workloads and looks at pods only of the few rollouts that stall). Each may be refused by RBAC
// (the chart's rbac.rolloutDiagnostics switches): a refusal is logged once per resource for the
// leadership term, and the diagnosis goes on with what it could read. Each is bounded in time too: a
// read the API server (or, for a log, the kubelet behind it) never answers would otherwise hold the
// rollout's deployment.failed back for good.

/** How long a read may take before the diagnosis goes on without it. */
export const podReadTimeoutMs = 10_000;

export class PodReads implements PodSource {
  private readonly refused = new Set<PodResource>();
  /** Requests made, by resource, for the operator's metrics and the measurements in docs/capacity.md. */
  readonly requests: Record<PodResource, number> = { pods: 0, events: 0, "pods/log": 0 };

  constructor(
    private readonly core: CoreV1Api,
    private readonly logger: Logger,
    private readonly timeoutMs = podReadTimeoutMs,
  ) {}

  /** undefined when refused (or failed): the caller goes on without. */
  private async read<T>(resource: PodResource, call: () => Promise<T>): Promise<T | undefined> {
    if (this.refused.has(resource)) return undefined;
    this.requests[resource] += 1;
    try {
      return await within(call(), this.timeoutMs, `reading ${resource}`);
    } catch (error) {
      if (isForbidden(error)) {
        this.refused.add(resource);
        this.logger.warn(
          { resource, ...describeError(error) },
          `rollout diagnostics go without ${resource}: the operator may not read them. Failed rollouts ` +
            `still fire deployment.failed, with what is known; grant it with the chart's ` +
            `rbac.rolloutDiagnostics values. Said once until the next leader`,
        );
      } else {
        this.logger.debug({ resource, ...describeError(error) }, "a rollout diagnosis read failed");
      }
      return undefined;
    }
  }

  async pods(selection: NewPods): Promise<V1Pod[] | undefined> {
    const list = await this.read("pods", () =>
      this.core.listNamespacedPod({
        namespace: selection.namespace,
        labelSelector: selection.labelSelector,
        limit: podsPerLook,
      }),
    );
    return list?.items.filter((pod) => selection.owns(pod));
  }

  /**
   * The pod's Events (a field selector: the API server filters them). All types: the Warnings are
   * reported, and Normal ones say when help is on the way for a pod that does not fit (pod-look.ts).
   */
  async events(namespace: string, pod: string): Promise<CoreV1Event[]> {
    const list = await this.read("events", () =>
      this.core.listNamespacedEvent({
        namespace,
        fieldSelector: `involvedObject.kind=Pod,involvedObject.name=${pod}`,
        limit: 30,
      }),
    );
    return list?.items ?? [];
  }

  /** The last `lines` lines of a container's log (its previous run's with `previous`). */
  async logTail(
    at: { namespace: string; pod: string; container: string; previous: boolean },
    lines: number,
  ): Promise<string[] | undefined> {
    const text = await this.read("pods/log", () =>
      this.core.readNamespacedPodLog({
        namespace: at.namespace,
        name: at.pod,
        container: at.container,
        previous: at.previous,
        tailLines: lines,
        limitBytes: logBytes,
      }),
    );
    if (text === undefined) return undefined;
    return String(text).replace(/\n$/, "").split("\n").slice(-lines);
  }
}
