import type { V1Deployment } from "@kubernetes/client-node";
import type { Pool } from "../../db/pool.js";
import { metrics } from "../../metrics.js";
import type { ProjectRow } from "../../projects/store.js";
import { recordRollout } from "../rollouts/record-rollout.js";
import type { ReconcileResult } from "../work-queue.js";

export interface RolloutControllerDeps {
  pool: Pool;
  getDeployment(namespace: string, name: string): V1Deployment | undefined;
  isSelected(namespace: string): boolean;
  projectFor(namespace: string): Promise<ProjectRow>;
}

/**
 * Reconciles one Deployment (key "namespace/name") into rollout rows and deployment.* events. A
 * Deployment that is gone is handled by its delete event (cancelRolloutsOfDeletedDeployments).
 */
export async function reconcileDeployment(
  deps: RolloutControllerDeps,
  key: string,
): Promise<ReconcileResult> {
  const [namespace = "", name = ""] = key.split("/");
  const deployment = deps.getDeployment(namespace, name);
  if (!deployment || !deps.isSelected(namespace)) return undefined;
  const started = performance.now();
  let result = "success";
  try {
    await recordRollout(deps.pool, await deps.projectFor(namespace), deployment);
  } catch (error) {
    result = "error";
    throw error;
  } finally {
    metrics.reconciles.inc({ controller: "rollout", result });
    metrics.reconcileDuration.observe({ controller: "rollout" }, (performance.now() - started) / 1000);
  }
  return undefined;
}
