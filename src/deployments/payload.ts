import { iso } from "../http/schemas.js";
import type { DeploymentStatus } from "./schemas.js";

/** The deployment payload (docs/api.md, "Deployments"), shared by all five deployment.* events. */
export interface DeploymentPayload {
  deployment_id: number;
  project_id: number;
  project_name: string;
  environment: string;
  branch: string | null;
  commit_sha: string | null;
  commit_message: string | null;
  url: string | null;
  status: DeploymentStatus;
  error_message: string | null;
  started_at: string | null;
  finished_at: string | null;
}

export interface DeploymentFacts {
  id: number;
  projectId: number;
  projectName: string;
  environment: string;
  branch: string | null;
  commitSha: string | null;
  commitMessage: string | null;
  url: string | null;
  status: DeploymentStatus;
  errorMessage: string | null;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/**
 * Builds the payload with the field rules docs/api.md states enforced whatever the facts say:
 * pending (created) has no url and no finished_at; succeeded has no error_message; failed has no url.
 */
export function deploymentPayload(facts: DeploymentFacts): DeploymentPayload {
  const finished = facts.status === "succeeded" || facts.status === "failed" || facts.status === "cancelled";
  return {
    deployment_id: facts.id,
    project_id: facts.projectId,
    project_name: facts.projectName,
    environment: facts.environment,
    branch: facts.branch,
    commit_sha: facts.commitSha,
    commit_message: facts.commitMessage,
    // A revision that never went live has no address: not yet (pending), never (failed, cancelled).
    url:
      facts.status === "pending" || facts.status === "failed" || facts.status === "cancelled"
        ? null
        : facts.url,
    status: facts.status,
    error_message: facts.status === "failed" ? (facts.errorMessage ?? "Deployment failed.") : null,
    started_at: iso(facts.startedAt),
    finished_at: finished ? iso(facts.finishedAt ?? new Date()) : null,
  };
}
