import type { DeploymentEventType } from "../event-types.js";
import type { ProjectRow } from "../projects/store.js";
import { deploymentPayload } from "./payload.js";
import type { DeploymentStatus } from "./schemas.js";

const statusOf: Record<DeploymentEventType, DeploymentStatus> = {
  "deployment.created": "pending",
  "deployment.ready": "ready",
  "deployment.succeeded": "succeeded",
  "deployment.failed": "failed",
  "deployment.cancelled": "cancelled",
};

/**
 * An example payload for a test event: the real project, deployment_id 0 (no real rollout), environment
 * "test", and the field rules of the chosen event type.
 */
export function exampleDeploymentPayload(
  eventType: DeploymentEventType,
  project: Pick<ProjectRow, "id" | "name">,
) {
  const now = new Date();
  return deploymentPayload({
    id: 0,
    projectId: project.id,
    projectName: project.name,
    environment: "test",
    branch: "main",
    commitSha: "0000000000000000000000000000000000000000",
    commitMessage: "Test event sent by webhook-operator",
    url: "https://example.com",
    status: statusOf[eventType],
    errorMessage: "Example failure: the rollout did not progress before its deadline.",
    startedAt: new Date(now.getTime() - 60_000),
    finishedAt: now,
  });
}
