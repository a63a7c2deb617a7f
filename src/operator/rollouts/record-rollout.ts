import { type Pool, type Queryable, withTransaction } from "../../db/pool.js";
import type { ClaimedDelivery } from "../../delivery-engine/claim.js";
import { emitEvents } from "../../delivery-engine/emit.js";
import type { EventHandOver } from "../../delivery-engine/engine.js";
import type { EventWorkload } from "../../delivery-engine/event-filters.js";
import { deploymentPayload } from "../../deployments/payload.js";
import type { DeploymentStatus, WorkloadKind } from "../../deployments/schemas.js";
import {
  cancelUnfinishedRollouts,
  type DeploymentRow,
  lockRollout,
  updateRollout,
} from "../../deployments/store.js";
import type { DeploymentEventType } from "../../event-types.js";
import type { RolloutDetails, RolloutFailure } from "../../formats/rollout-details.js";
import { type ProjectRow, projectNames } from "../../projects/store.js";
import { readRolloutAnnotations } from "./annotations.js";
import { eventsToEmit, isFinished, statusAfter } from "./phase.js";
import { type PreviousRevision, rolloutChanges } from "./rollout-changes.js";
import { type LinkTemplate, renderLink } from "./rollout-links.js";
import { rolloutFinishedAt, rolloutStartedAt } from "./rollout-times.js";
import { noRouting, type Routing, rolloutUrl } from "./rollout-url.js";
import type { ObservedRollout, Workload } from "./workload-kinds.js";

const statusOfEvent: Record<DeploymentEventType, DeploymentStatus> = {
  "deployment.created": "pending",
  "deployment.ready": "ready",
  "deployment.succeeded": "succeeded",
  "deployment.failed": "failed",
  "deployment.cancelled": "cancelled",
};

/** The payload of `event` for this rollout: each event carries the status it announces (docs/api.md, "Deployments"). */
function payloadFor(event: DeploymentEventType, row: DeploymentRow, projectName: string) {
  return deploymentPayload({
    id: row.id,
    projectId: row.project_id,
    projectName,
    environment: row.environment,
    branch: row.branch,
    commitSha: row.commit_sha,
    commitMessage: row.commit_message,
    url: row.url,
    status: statusOfEvent[event],
    errorMessage: row.error_message,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  });
}

/** The workload a webhook's kind and label filters see (delivery-engine/event-filters.ts). */
const workloadOf = (kind: WorkloadKind, workload: Workload): EventWorkload => ({
  kind,
  labels: workload.metadata?.labels ?? {},
});

/** `workload`: the one these rollouts belong to, when known (not for one deleted while no leader ran). */
async function emitCancellations(
  db: Queryable,
  cancelled: DeploymentRow[],
  workload?: EventWorkload,
): Promise<void> {
  if (cancelled.length === 0) return;
  const names = await projectNames(db, [...new Set(cancelled.map((row) => row.project_id))]);
  await emitEvents(
    db,
    cancelled.map((row) => ({
      eventType: "deployment.cancelled" as const,
      projectId: row.project_id,
      payload: payloadFor("deployment.cancelled", row, names.get(row.project_id) ?? ""),
      ...(workload ? { workload } : {}),
      // Its last event: the row's emitted_events already names it.
      rollout: { id: row.id, position: row.emitted_events.length - 1 },
    })),
  );
}

/**
 * Turns what a workload's controller reports into rollout state and events, in ONE transaction: the
 * rollout row (locked), the superseded rollouts it cancels, and the outbox rows of every event. The
 * row records which events were emitted, so each fires exactly once per rollout across restarts and
 * leader changes, and a transition missed while no operator ran is emitted late rather than never.
 * Returns the events emitted.
 */
export async function recordRollout(
  pool: Pool,
  project: ProjectRow,
  rollout: ObservedRollout,
  observed: {
    /**
     * Its ReplicaSet's creation (a StatefulSet's or DaemonSet's: its ControllerRevision's), for a
     * rollout first seen after it progressed (rollout-times.ts).
     */
    replicaSetCreated?: Date;
    /** Where the url of a Deployment without a url annotation comes from (rollout-url.ts). */
    routing?: Routing;
    /** Hands the events' deliveries to this replica's worker once the transaction committed (emit.ts). */
    handOver?: EventHandOver;
    /** The revision this rollout replaces, from the caches: images before (rollout-changes.ts). */
    previous?: PreviousRevision;
    /** The configured links (ROLLOUT_LINKS), rendered here for this rollout (rollout-links.ts). */
    links?: readonly LinkTemplate[];
    /** What the pods report, for a rollout that failed: carried by its deployment.failed only. */
    failure?: RolloutFailure;
  } = {},
): Promise<DeploymentEventType[]> {
  const { kind, workload, revision, phase } = rollout;
  const uid = workload.metadata?.uid;
  // Until the workload's controller has assigned a revision, there is no rollout to speak of.
  if (!uid || !revision) return [];
  const facts = readRolloutAnnotations(workload);
  const where = { kind, name: workload.metadata?.name ?? "", namespace: workload.metadata?.namespace ?? "" };
  const details: RolloutDetails = {
    workload: { ...where, revision },
    changes: rolloutChanges(workload, observed.previous, facts),
    links: (observed.links ?? []).map((link) =>
      renderLink(link, { ...where, revision, project: project.name }),
    ),
  };

  let handedOver: ClaimedDelivery[] = [];
  const recorded = await withTransaction(pool, async (client) => {
    const superseded = await cancelUnfinishedRollouts(client, { sourceUid: uid, beforeRevision: revision });
    await emitCancellations(client, superseded, workloadOf(kind, workload));

    const { row } = await lockRollout(client, {
      projectId: project.id,
      sourceUid: uid,
      revision,
      workloadKind: kind,
      name: workload.metadata?.name ?? "",
      environment: facts.environment,
      branch: facts.branch,
      commitSha: facts.commitSha,
      commitMessage: facts.commitMessage,
      startedAt: rolloutStartedAt(observed.replicaSetCreated, new Date()),
    });
    const events = eventsToEmit(phase.phase, { status: row.status, emitted: row.emitted_events });
    if (events.length === 0) return superseded.map(() => "deployment.cancelled" as const);

    const status = statusAfter[phase.phase];
    const live = status === "ready" || status === "succeeded";
    const updated = await updateRollout(client, row.id, {
      status,
      emittedEvents: [...row.emitted_events, ...events],
      // Read only for a revision that went live: the others carry no url (deployments/payload.ts).
      url: facts.url ?? (live ? rolloutUrl(workload, observed.routing ?? noRouting, kind) : null),
      errorMessage: phase.phase === "failed" ? phase.message : null,
      finishedAt: isFinished(status)
        ? rolloutFinishedAt(row.started_at, rollout.concludedAt, new Date())
        : null,
    });
    ({ handedOver } = await emitEvents(
      client,
      events.map((event, i) => ({
        eventType: event,
        projectId: project.id,
        payload: payloadFor(event, updated, project.name),
        workload: workloadOf(kind, workload),
        // Its place among the rollout's events, which its deliveries keep (docs/deliveries.md, "Order").
        rollout: { id: row.id, position: row.emitted_events.length + i },
        rolloutDetails:
          event === "deployment.failed" && observed.failure
            ? { ...details, failure: observed.failure }
            : details,
      })),
      observed.handOver?.handOverLease(),
    ));
    return [...superseded.map(() => "deployment.cancelled" as const), ...events];
  });
  observed.handOver?.handOver(handedOver);
  return recorded;
}

/**
 * Cancels the unfinished rollouts of workloads that are gone: one deleted (sourceUid), or, after a
 * full list of a kind, every one of that kind not in it (deleted while no operator was running). A
 * deleted workload's last state, when given, is the workload its cancellations are filtered by.
 */
export async function cancelRolloutsOfDeletedDeployments(
  pool: Pool,
  target: { sourceUid: string } | { notInSourceUids: string[]; workloadKind: WorkloadKind },
  deleted?: { kind: WorkloadKind; workload: Workload },
): Promise<number> {
  return withTransaction(pool, async (client) => {
    const cancelled = await cancelUnfinishedRollouts(client, target);
    await emitCancellations(client, cancelled, deleted && workloadOf(deleted.kind, deleted.workload));
    return cancelled.length;
  });
}
