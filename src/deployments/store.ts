import type { Queryable } from "../db/pool.js";
import type { PageRequest } from "../http/pagination.js";
import { offsetOf } from "../http/pagination.js";
import type { DeploymentStatus } from "./schemas.js";

export interface DeploymentRow {
  id: number;
  project_id: number;
  source_uid: string | null;
  revision: string | null;
  name: string;
  environment: string;
  branch: string | null;
  commit_sha: string | null;
  commit_message: string | null;
  url: string | null;
  status: DeploymentStatus;
  error_message: string | null;
  started_at: Date | null;
  finished_at: Date | null;
  emitted_events: string[];
  created_at: Date;
  updated_at: Date;
}

const columns = `id, project_id, source_uid, revision, name, environment, branch, commit_sha, commit_message,
  url, status, error_message, started_at, finished_at, emitted_events, created_at, updated_at`;

export async function listDeployments(
  db: Queryable,
  projectId: number,
  page: PageRequest,
): Promise<{ rows: DeploymentRow[]; total: number }> {
  const [items, count] = await Promise.all([
    db.query<DeploymentRow>(
      `SELECT ${columns} FROM deployments WHERE project_id = $1
        ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
      [projectId, page.size, offsetOf(page)],
    ),
    db.query<{ total: number }>("SELECT count(*)::int AS total FROM deployments WHERE project_id = $1", [
      projectId,
    ]),
  ]);
  return { rows: items.rows, total: count.rows[0]?.total ?? 0 };
}

export interface NewDeployment {
  projectId: number;
  sourceUid?: string | null;
  revision?: string | null;
  name: string;
  environment: string;
  branch?: string | null;
  commitSha?: string | null;
  commitMessage?: string | null;
  startedAt?: Date | null;
}

/** A new rollout starts pending, with no url and no finished_at (spec §2.2, deployment.created). */
export async function insertDeployment(db: Queryable, deployment: NewDeployment): Promise<DeploymentRow> {
  const { rows } = await db.query<DeploymentRow>(
    `INSERT INTO deployments
       (project_id, source_uid, revision, name, environment, branch, commit_sha, commit_message, status, started_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', COALESCE($9, clock_timestamp()))
     RETURNING ${columns}`,
    [
      deployment.projectId,
      deployment.sourceUid ?? null,
      deployment.revision ?? null,
      deployment.name,
      deployment.environment,
      deployment.branch ?? null,
      deployment.commitSha ?? null,
      deployment.commitMessage ?? null,
      deployment.startedAt ?? null,
    ],
  );
  return rows[0] as DeploymentRow;
}
