import type { V1Deployment } from "@kubernetes/client-node";
import type { Pool } from "../../db/pool.js";
import type { EventHandOver } from "../../delivery-engine/engine.js";
import type { Logger } from "../../logger.js";
import type { ProjectRow } from "../../projects/store.js";
import { slimWorkload } from "../cache-transforms.js";
import { type Controller, type ControllerManager, objectKey, queueSettings } from "../manager.js";
import { listInPages } from "../paged-list.js";
import { deploymentNewPods } from "../rollouts/new-pods.js";
import { revisionAnnotation, rolloutPhase } from "../rollouts/phase.js";
import type { NewPods } from "../rollouts/pod-source.js";
import { cancelRolloutsOfDeletedDeployments, recordRollout } from "../rollouts/record-rollout.js";
import { replicaSetCache } from "../rollouts/replica-set-cache.js";
import type { PreviousRevision } from "../rollouts/rollout-changes.js";
import type { RolloutDiagnosis } from "../rollouts/rollout-diagnosis.js";
import type { LinkTemplate } from "../rollouts/rollout-links.js";
import type { Routing } from "../rollouts/rollout-url.js";
import { deploymentRollout } from "../rollouts/workload-kinds.js";
import { type ReconcileResult, WorkQueue } from "../work-queue.js";
import type { NamespaceController } from "./namespace-controller.js";
import { measuredReconcile } from "./reconcile-metrics.js";

export interface RolloutControllerDeps {
  pool: Pool;
  getDeployment(namespace: string, name: string): V1Deployment | undefined;
  isSelected(namespace: string): boolean;
  projectFor(namespace: string): Promise<ProjectRow>;
  /** The creation time of the ReplicaSet of the Deployment's current revision (rollout-times.ts). */
  rolloutStartedAt(deployment: V1Deployment): Promise<Date | undefined>;
  /** What routes to the Deployment's pods, from the caches (rollout-url.ts). */
  routing: Routing;
  /** The revision the Deployment's current one replaces, from the ReplicaSet cache (replica-set-cache.ts). */
  previousRevision(deployment: V1Deployment): PreviousRevision | undefined;
  /** ROLLOUT_LINKS (rollout-links.ts). */
  links: readonly LinkTemplate[];
  /** Hands the deliveries of the events recorded to this replica's worker (emit.ts). */
  handOver?: EventHandOver;
  logger: Logger;
  /**
   * Per Deployment UID, the "revision/phase" this controller last recorded (kept for one leadership
   * term, dropped when the Deployment is deleted). A reconcile that finds the same revision in the same
   * phase has nothing to record and skips the database.
   */
  recorded: Map<string, string>;
  /** What the new pods of a stalled rollout report, and the fail-fast rule (rollout-diagnosis.ts). */
  diagnosis: RolloutDiagnosis;
  /** The pods of the Deployment's current revision, when its ReplicaSet is known (new-pods.ts). */
  newPods(deployment: V1Deployment): NewPods | undefined;
}

/**
 * Reconciles one Deployment (key "namespace/name") into rollout rows and deployment.* events. A
 * Deployment that is gone is handled by its delete event (cancelRolloutsOfDeletedDeployments).
 *
 * Most updates of a Deployment do not change its rollout's phase (the Deployment controller reports
 * every replica coming up, and re-lists repeat everything); recording such an update would find every
 * event already emitted and change nothing, yet cost a transaction of six or seven statements. Those
 * are skipped when this controller has itself recorded that revision in that phase. Anything else
 * still goes to recordRollout, whose rollout row remains the authority on what was emitted.
 */
export async function reconcileDeployment(
  deps: RolloutControllerDeps,
  key: string,
): Promise<ReconcileResult> {
  const [namespace = "", name = ""] = key.split("/");
  const deployment = deps.getDeployment(namespace, name);
  if (!deployment || !deps.isSelected(namespace)) return undefined;
  const uid = deployment.metadata?.uid;
  const revision = deployment.metadata?.annotations?.[revisionAnnotation];
  const controller = rolloutPhase(deployment);
  // A rollout that stalls is looked at (its pods), and may fail before its deadline; one that
  // succeeded is not, should its pods come and go later.
  const { phase, failure, recheckInMs } =
    uid && revision && deps.recorded.get(uid) !== `${revision}/succeeded`
      ? await deps.diagnosis.diagnose(uid, revision, controller, () => deps.newPods(deployment))
      : { phase: controller, failure: undefined, recheckInMs: undefined };
  const recheck = recheckInMs === undefined ? undefined : { requeueAfterMs: recheckInMs };
  const seen = uid && revision ? `${revision}/${phase.phase}` : undefined;
  if (uid && seen !== undefined && deps.recorded.get(uid) === seen) return recheck;
  await measuredReconcile("rollout", async () => {
    // A rollout first seen past its start (the operator was down, or just became leader) gets its
    // ReplicaSet's creation time; one seen as it starts needs no lookup: now is when it started.
    const firstSight = uid && revision && !deps.recorded.get(uid)?.startsWith(`${revision}/`);
    const replicaSetCreated =
      firstSight && phase.phase !== "progressing"
        ? await deps.rolloutStartedAt(deployment).catch((error: unknown) => {
            deps.logger.debug({ err: error, deployment: key }, "reading the rollout's ReplicaSet failed");
            return undefined;
          })
        : undefined;
    const rollout = deploymentRollout(deployment);
    await recordRollout(
      deps.pool,
      await deps.projectFor(namespace),
      // Failed early by the operator: it concluded now, not when the Deployment controller last spoke.
      phase === controller ? rollout : { ...rollout, phase, concludedAt: undefined },
      {
        replicaSetCreated,
        routing: deps.routing,
        handOver: deps.handOver,
        previous: deps.previousRevision(deployment),
        links: deps.links,
        failure,
      },
    );
    if (uid && seen !== undefined) deps.recorded.set(uid, seen);
  });
  return recheck;
}

/**
 * The rollout controller's watches, beside its reconcile (flux's SetupWithManager): Deployments and
 * namespace changes (what routes to their pods, for rollout URLs, is shared with the other kinds). A
 * Deployment deleted cancels its unfinished rollouts; so does one missing from a complete list
 * (deleted while no leader ran).
 */
export function setupRolloutController(
  manager: ControllerManager,
  deps: { namespaces: NamespaceController; routing: Routing; diagnosis: RolloutDiagnosis },
): Controller {
  const { pool, apps, logger } = manager;
  const deployments = manager.informer<V1Deployment>(
    "deployments",
    "/apis/apps/v1/deployments",
    async () => {
      const list = await listInPages((page) => apps.listDeploymentForAllNamespaces(page), slimWorkload);
      await cancelRolloutsOfMissingDeployments(list.items);
      return list;
    },
    slimWorkload,
  );
  // When a rollout first seen after it progressed started, from a cache rather than a request each.
  const replicaSets = replicaSetCache({ informer: manager.informer, apps });

  async function cancelRolloutsOfMissingDeployments(present: V1Deployment[]) {
    const uids = present.flatMap((d) => (d.metadata?.uid ? [d.metadata.uid] : []));
    const cancelled = await cancelRolloutsOfDeletedDeployments(pool, {
      notInSourceUids: uids,
      workloadKind: "Deployment",
    }).catch((error: unknown) => {
      logger.warn({ err: error }, "cancelling rollouts of deleted Deployments failed; next re-list retries");
      return 0;
    });
    if (cancelled > 0)
      logger.info({ cancelled }, "cancelled rollouts of Deployments deleted while no leader ran");
  }

  const recorded = new Map<string, string>();
  const queue = new WorkQueue(
    (key) =>
      reconcileDeployment(
        {
          pool,
          getDeployment: (ns, name) => deployments.informer.get(name, ns),
          isSelected: (ns) => deps.namespaces.selection.isSelected(ns),
          projectFor: deps.namespaces.projectFor,
          rolloutStartedAt: replicaSets.createdAt,
          routing: deps.routing,
          previousRevision: replicaSets.previousRevision,
          links: manager.config.rolloutLinks,
          handOver: manager.handOver,
          logger,
          recorded,
          diagnosis: deps.diagnosis,
          newPods: (deployment) => deploymentNewPods(deployment, replicaSets.nameOf(deployment)),
        },
        key,
      ),
    { ...queueSettings, logger },
  );
  // What the watch delivers goes ahead of what a list brought (work-queue.ts, Priority).
  const enqueue = (deployment: V1Deployment) =>
    queue.add(objectKey(deployment), deployments.fromWatch() ? "live" : "backlog");
  deps.namespaces.onChange((namespace) => {
    for (const deployment of deployments.informer.list(namespace))
      queue.add(objectKey(deployment), "backlog");
  });
  deployments.informer.on("add", enqueue);
  deployments.informer.on("update", enqueue);
  deployments.informer.on("delete", (deployment) => {
    const uid = deployment.metadata?.uid;
    if (!uid) return;
    recorded.delete(uid);
    deps.diagnosis.forget(uid);
    cancelRolloutsOfDeletedDeployments(
      pool,
      { sourceUid: uid },
      { kind: "Deployment", workload: deployment },
    ).catch((error: unknown) =>
      logger.error(
        { err: error, deployment: objectKey(deployment) },
        "cancelling rollouts of a deleted Deployment failed",
      ),
    );
  });

  return {
    async start() {
      // ReplicaSets first: reconciles read rollout start times from their cache.
      await replicaSets.start();
      await deployments.start();
    },
    async stop() {
      await Promise.all([deployments.stop(), replicaSets.stop()]);
      await queue.stop();
    },
    idle: () => queue.idle(),
  };
}
