import type { V1ControllerRevision } from "@kubernetes/client-node";
import type { Pool } from "../../db/pool.js";
import type { EventHandOver } from "../../delivery-engine/engine.js";
import type { Logger } from "../../logger.js";
import type { ProjectRow } from "../../projects/store.js";
import { slimWorkload } from "../cache-transforms.js";
import { type Controller, type ControllerManager, objectKey, queueSettings } from "../manager.js";
import { listInPages } from "../paged-list.js";
import { ProgressClock, phaseAtDeadline, progressDeadlineSeconds } from "../rollouts/progress-deadline.js";
import { cancelRolloutsOfDeletedDeployments, recordRollout } from "../rollouts/record-rollout.js";
import type { RolloutDiagnosis } from "../rollouts/rollout-diagnosis.js";
import type { LinkTemplate } from "../rollouts/rollout-links.js";
import type { Routing } from "../rollouts/rollout-url.js";
import { resourceOfKind, type Workload } from "../rollouts/workload-kinds.js";
import { type ReconcileResult, WorkQueue } from "../work-queue.js";
import type { NamespaceController } from "./namespace-controller.js";
import { measuredReconcile } from "./reconcile-metrics.js";
import type { WorkloadSource } from "./workload-sources.js";

export interface WorkloadRolloutDeps<T extends Workload> {
  pool: Pool;
  source: WorkloadSource<T>;
  get(namespace: string, name: string): T | undefined;
  isSelected(namespace: string): boolean;
  projectFor(namespace: string): Promise<ProjectRow>;
  routing: Routing;
  handOver?: EventHandOver;
  /** When each rollout last moved, for its progress deadline (progress-deadline.ts). */
  clock: ProgressClock;
  /** Per workload UID, the "revision/phase" last recorded (as the Deployment controller keeps it). */
  recorded: Map<string, string>;
  /** What the new pods of a stalled rollout report, and the fail-fast rule (rollout-diagnosis.ts). */
  diagnosis: RolloutDiagnosis;
  /** ROLLOUT_LINKS (rollout-links.ts). */
  links: readonly LinkTemplate[];
  now?: () => Date;
}

/**
 * Reconciles one StatefulSet or DaemonSet (key "namespace/name") into rollout rows and deployment.*
 * events, like the Deployment controller does (rollout-controller.ts), from the kind's own status and
 * the progress deadline the operator keeps for it. An unfinished rollout with a deadline is looked at
 * again when the deadline would pass, since no status change announces it.
 */
export async function reconcileWorkload<T extends Workload>(
  deps: WorkloadRolloutDeps<T>,
  key: string,
): Promise<ReconcileResult> {
  const [namespace = "", name = ""] = key.split("/");
  const workload = deps.get(namespace, name);
  if (!workload || !deps.isSelected(namespace)) return undefined;
  const uid = workload.metadata?.uid;
  const revision = deps.source.revision(workload);
  // No revision yet (or the ControllerRevision cache is behind): its event brings the workload back.
  if (!uid || !revision) return undefined;
  const progress = deps.source.progress(workload);
  const now = deps.now?.() ?? new Date();
  const atDeadline = phaseAtDeadline(progress, {
    since: deps.clock.observe(uid, revision, progress.counters, now),
    now,
    deadlineSeconds: progressDeadlineSeconds(workload, progress.onDelete),
    kind: deps.source.kind,
    name,
  });
  // A rollout that stalls is looked at (its pods), and may fail before its deadline; one that
  // succeeded is not, should its pods come and go later.
  const { phase, failure, recheckInMs } =
    deps.recorded.get(uid) === `${revision}/succeeded`
      ? { phase: atDeadline.phase, failure: undefined, recheckInMs: undefined }
      : await deps.diagnosis.diagnose(uid, revision, atDeadline.phase, () =>
          deps.source.newPods(workload, revision),
        );
  const recheckIn = [atDeadline.recheckInMs, recheckInMs].filter((ms) => ms !== undefined);
  const recheck = recheckIn.length === 0 ? undefined : { requeueAfterMs: Math.min(...recheckIn) };
  const seen = `${revision}/${phase.phase}`;
  if (deps.recorded.get(uid) === seen) return recheck;
  await measuredReconcile("rollout", async () => {
    const firstSight = !deps.recorded.get(uid)?.startsWith(`${revision}/`);
    await recordRollout(
      deps.pool,
      await deps.projectFor(namespace),
      { kind: deps.source.kind, workload, revision, phase },
      {
        // Seen only after it progressed: it started when its ControllerRevision was made.
        replicaSetCreated:
          firstSight && phase.phase !== "progressing" ? deps.source.startedAt(workload) : undefined,
        routing: deps.routing,
        handOver: deps.handOver,
        failure,
        previous: deps.source.previousRevision(workload, revision),
        links: deps.links,
      },
    );
    deps.recorded.set(uid, seen);
  });
  return recheck;
}

/**
 * The rollout controller of one kind besides Deployments: its informer, work queue and delete
 * handling, sharing the routing caches with the Deployment controller. A workload deleted cancels its
 * unfinished rollouts; so does one missing from a complete list of its kind.
 */
export function setupWorkloadRolloutController<T extends Workload>(
  manager: ControllerManager,
  deps: {
    namespaces: NamespaceController;
    routing: Routing;
    diagnosis: RolloutDiagnosis;
    source: WorkloadSource<T>;
  },
): Controller & { enqueueOwner(revision: V1ControllerRevision): void } {
  const { pool, logger } = manager;
  const { source } = deps;
  // The cache keeps only what is read (cache-transforms.ts), as the Deployments' does.
  const informer = manager.informer<T>(
    resourceOfKind[source.kind],
    source.path,
    async () => {
      const list = await listInPages((page) => source.list(page), slimWorkload);
      await cancelMissing(list.items, logger.child({ kind: source.kind }));
      return list;
    },
    slimWorkload,
  );

  async function cancelMissing(present: T[], log: Logger) {
    const uids = present.flatMap((w) => (w.metadata?.uid ? [w.metadata.uid] : []));
    const cancelled = await cancelRolloutsOfDeletedDeployments(pool, {
      notInSourceUids: uids,
      workloadKind: source.kind,
    }).catch((error: unknown) => {
      log.warn({ err: error }, "cancelling rollouts of deleted workloads failed; next re-list retries");
      return 0;
    });
    if (cancelled > 0) log.info({ cancelled }, "cancelled rollouts of workloads deleted while no leader ran");
  }

  const recorded = new Map<string, string>();
  const clock = new ProgressClock();
  const queue = new WorkQueue(
    (key) =>
      reconcileWorkload(
        {
          pool,
          source,
          get: (namespace, name) => informer.informer.get(name, namespace),
          isSelected: (namespace) => deps.namespaces.selection.isSelected(namespace),
          projectFor: deps.namespaces.projectFor,
          routing: deps.routing,
          handOver: manager.handOver,
          clock,
          recorded,
          diagnosis: deps.diagnosis,
          links: manager.config.rolloutLinks,
        },
        key,
      ),
    { ...queueSettings, logger },
  );
  // What the watch delivers goes ahead of what a list brought (work-queue.ts, Priority).
  const enqueue = (workload: T) => queue.add(objectKey(workload), informer.fromWatch() ? "live" : "backlog");
  deps.namespaces.onChange((namespace) => {
    for (const workload of informer.informer.list(namespace)) queue.add(objectKey(workload), "backlog");
  });
  informer.informer.on("add", enqueue);
  informer.informer.on("update", enqueue);
  informer.informer.on("delete", (workload) => {
    const uid = workload.metadata?.uid;
    if (!uid) return;
    recorded.delete(uid);
    clock.forget(uid);
    deps.diagnosis.forget(uid);
    cancelRolloutsOfDeletedDeployments(pool, { sourceUid: uid }, { kind: source.kind, workload }).catch(
      (error: unknown) =>
        logger.error(
          { err: error, kind: source.kind, workload: objectKey(workload) },
          "cancelling rollouts of a deleted workload failed",
        ),
    );
  });

  return {
    enqueueOwner(revision) {
      const owner = revision.metadata?.ownerReferences?.find((o) => o.controller && o.kind === source.kind);
      if (owner) queue.add(`${revision.metadata?.namespace ?? ""}/${owner.name}`);
    },
    start: () => informer.start(),
    async stop() {
      await informer.stop();
      await queue.stop();
    },
    idle: () => queue.idle(),
  };
}
