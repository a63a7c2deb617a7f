import { describeError } from "../../logger.js";
import { isForbidden } from "../kube-errors.js";
import type { Controller, ControllerManager } from "../manager.js";
import type { RolloutDiagnosis } from "../rollouts/rollout-diagnosis.js";
import type { Routing } from "../rollouts/rollout-url.js";
import { resourceOfKind, type WorkloadKind } from "../rollouts/workload-kinds.js";
import type { NamespaceController } from "./namespace-controller.js";
import { setupWorkloadRolloutController } from "./workload-rollout-controller.js";
import { controllerRevisionCache, daemonSetSource, statefulSetSource } from "./workload-sources.js";

/**
 * The rollout controllers of the StatefulSets and DaemonSets that WATCH_WORKLOAD_KINDS names. Each kind
 * is first listed once (limit 1): a kind the operator may not list (403, RBAC) is skipped with one
 * warning that says what to grant, rather than retried for ever; the next leader looks again.
 */
export function setupWorkloadRollouts(
  manager: ControllerManager,
  deps: { namespaces: NamespaceController; routing: Routing; diagnosis: RolloutDiagnosis },
): Controller {
  const kinds = manager.config.workloadKinds.filter((kind) => kind !== "Deployment");
  const controllers = new Map<WorkloadKind, ReturnType<typeof setupWorkloadRolloutController>>();
  const cache = controllerRevisionCache(manager, (revision) =>
    controllers.get("StatefulSet")?.enqueueOwner(revision),
  );
  const statefulSets = statefulSetSource(manager.apps, cache.revisions);
  const daemonSets = daemonSetSource(manager.apps, cache.revisions);
  const kindsBesideDeployments = {
    StatefulSet: {
      probe: () => statefulSets.list({ limit: 1 }),
      setup: () => setupWorkloadRolloutController(manager, { ...deps, source: statefulSets }),
    },
    DaemonSet: {
      probe: () => daemonSets.list({ limit: 1 }),
      setup: () => setupWorkloadRolloutController(manager, { ...deps, source: daemonSets }),
    },
  };
  let revisionsStarted = false;

  /** False, after saying so, when the operator may not list what the kind needs. */
  async function permitted(kind: "StatefulSet" | "DaemonSet"): Promise<boolean> {
    const needs: [string, () => Promise<unknown>][] = [
      [`${resourceOfKind[kind]}.apps`, kindsBesideDeployments[kind].probe],
      ["controllerrevisions.apps", cache.probe],
    ];
    for (const [resource, probe] of needs) {
      try {
        await probe();
      } catch (error) {
        // Anything but a refusal (a timeout, a 500) is left to the informer's own retries.
        if (!isForbidden(error)) continue;
        manager.logger.warn(
          { kind, resource, ...describeError(error) },
          `${kind} rollouts are not watched: the operator may not list ${resource}. Grant list and watch ` +
            `on ${resource} (the chart does), or leave ${kind} out of WATCH_WORKLOAD_KINDS`,
        );
        return false;
      }
    }
    return true;
  }

  return {
    async start() {
      for (const kind of kinds) {
        if (kind !== "StatefulSet" && kind !== "DaemonSet") continue;
        if (!(await permitted(kind))) continue;
        const controller = kindsBesideDeployments[kind].setup();
        controllers.set(kind, controller);
        // StatefulSets read their revision numbers from the cache: it is filled first.
        if (!revisionsStarted) {
          revisionsStarted = true;
          await cache.informer.start();
        }
        await controller.start();
      }
    },
    async stop() {
      await Promise.all([...controllers.values()].map((controller) => controller.stop()));
      if (revisionsStarted) await cache.informer.stop();
    },
    async idle() {
      await Promise.all([...controllers.values()].map((controller) => controller.idle()));
    },
  };
}
