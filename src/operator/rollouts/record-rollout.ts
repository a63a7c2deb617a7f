import type { V1Deployment } from "@kubernetes/client-node";
import { type Pool, type Queryable, withTransaction } from "../../db/pool.js";
import type { ClaimedDelivery } from "../../delivery-engine/claim.js";
import { emitEvents } from "../../delivery-engine/emit.js";
import type { EventHandOver } from "../../delivery-engine/engine.js";
import { deploymentPayload } from "../../deployments/payload.js";
import type { DeploymentStatus } from "../../deployments/schemas.js";
import {
  cancelUnfinishedRollouts,
  type DeploymentRow,
  lockRollout,
  updateRollout,
} from "../../deployments/store.js";
import type { DeploymentEventType } from "../../event-types.js";
import { type ProjectRow, projectNames } from "../../projects/store.js";
import { readRolloutAnnotations } from "./annotations.js";
import { eventsToEmit, isFinished, revisionAnnotation, rolloutPhase, statusAfter } from "./phase.js";
import { concludedAt, rolloutFinishedAt, rolloutStartedAt } from "./rollout-times.js";
import { noRouting, type Routing, rolloutUrl } from "./rollout-url.js";

const statusOfEvent: Record<DeploymentEventType, DeploymentStatus> = {
  "deployment.created": "pending",
  "deployment.ready": "ready",
  "deployment.succeeded": "succeeded",
  "deployment.failed": "failed",
  "deployment.cancelled": "cancelled",
};

/** The payload of `event` for this rollout: each event carries the status it announces (spec §2.2). */
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

async function emitCancellations(db: Queryable, cancelled: DeploymentRow[]): Promise<void> {
  if (cancelled.length === 0) return;
  const names = await projectNames(db, [...new Set(cancelled.map((row) => row.project_id))]);
  await emitEvents(
    db,
    cancelled.map((row) => ({
      eventType: "deployment.cancelled" as const,
      projectId: row.project_id,
      payload: payloadFor("deployment.cancelled", row, names.get(row.project_id) ?? ""),
      // Its last event: the row's emitted_events already names it.
      rollout: { id: row.id, position: row.emitted_events.length - 1 },
    })),
  );
}

/**
 * Turns what a Deployment reports into rollout state and events, in ONE transaction: the rollout row
 * (locked), the superseded rollouts it cancels, and the outbox rows of every event. The row records
 * which events were emitted, so each fires exactly once per rollout across restarts and leader
 * changes, and a transition missed while no operator ran is emitted late rather than never.
 * Returns the events emitted.
 */
export async function recordRollout(
  pool: Pool,
  project: ProjectRow,
  deployment: V1Deployment,
  observed: {
    /** Its ReplicaSet's creation, for a rollout first seen after it progressed (rollout-times.ts). */
    replicaSetCreated?: Date;
    /** Where the url of a Deployment without a url annotation comes from (rollout-url.ts). */
    routing?: Routing;
    /** Hands the events' deliveries to this replica's worker once the transaction committed (emit.ts). */
    handOver?: EventHandOver;
  } = {},
): Promise<DeploymentEventType[]> {
  const uid = deployment.metadata?.uid;
  const revision = deployment.metadata?.annotations?.[revisionAnnotation];
  // Until the Deployment controller has stamped a revision, there is no rollout to speak of.
  if (!uid || !revision) return [];
  const phase = rolloutPhase(deployment);
  const facts = readRolloutAnnotations(deployment);

  let handedOver: ClaimedDelivery[] = [];
  const recorded = await withTransaction(pool, async (client) => {
    const superseded = await cancelUnfinishedRollouts(client, { sourceUid: uid, beforeRevision: revision });
    await emitCancellations(client, superseded);

    const { row } = await lockRollout(client, {
      projectId: project.id,
      sourceUid: uid,
      revision,
      name: deployment.metadata?.name ?? "",
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
      url: facts.url ?? (live ? rolloutUrl(deployment, observed.routing ?? noRouting) : null),
      errorMessage: phase.phase === "failed" ? phase.message : null,
      finishedAt: isFinished(status)
        ? rolloutFinishedAt(row.started_at, concludedAt(deployment), new Date())
        : null,
    });
    ({ handedOver } = await emitEvents(
      client,
      events.map((event, i) => ({
        eventType: event,
        projectId: project.id,
        payload: payloadFor(event, updated, project.name),
        // Its place among the rollout's events, which its deliveries keep (delivery-engine/rollout-order.ts).
        rollout: { id: row.id, position: row.emitted_events.length + i },
      })),
      observed.handOver?.handOverLease(),
    ));
    return [...superseded.map(() => "deployment.cancelled" as const), ...events];
  });
  observed.handOver?.handOver(handedOver);
  return recorded;
}

/**
 * Cancels the unfinished rollouts of Deployments that are gone: one deleted (sourceUid), or, after a
 * full list, every one whose Deployment is not in it (deleted while no operator was running).
 */
export async function cancelRolloutsOfDeletedDeployments(
  pool: Pool,
  target: { sourceUid: string } | { notInSourceUids: string[] },
): Promise<number> {
  return withTransaction(pool, async (client) => {
    const cancelled = await cancelUnfinishedRollouts(client, target);
    await emitCancellations(client, cancelled);
    return cancelled.length;
  });
}
