import { type PageRequest, selectPage } from "../db/page.js";
import type { Queryable } from "../db/pool.js";
import type { DeploymentStatus, WorkloadKind } from "./schemas.js";

export interface DeploymentRow {
  id: number;
  project_id: number;
  source_uid: string | null;
  revision: string | null;
  /** The kind of workload the rollout belongs to; `name` is that workload's name. */
  workload_kind: WorkloadKind;
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

const columns = `id, project_id, source_uid, revision, workload_kind, name, environment, branch, commit_sha,
  commit_message, url, status, error_message, started_at, finished_at, emitted_events, created_at, updated_at`;

export function listDeployments(
  db: Queryable,
  projectId: number,
  page: PageRequest,
): Promise<{ rows: DeploymentRow[]; total: number }> {
  return selectPage<DeploymentRow>(
    db,
    {
      columns,
      from: "deployments WHERE project_id = $1",
      orderBy: "created_at DESC, id DESC",
      params: [projectId],
    },
    page,
  );
}

export interface NewDeployment {
  projectId: number;
  sourceUid?: string | null;
  revision?: string | null;
  /** Default: a Deployment. */
  workloadKind?: WorkloadKind;
  name: string;
  environment: string;
  branch?: string | null;
  commitSha?: string | null;
  commitMessage?: string | null;
  startedAt?: Date | null;
}

/** A new rollout starts pending, with no url and no finished_at (deployment.created). */
export async function insertDeployment(db: Queryable, deployment: NewDeployment): Promise<DeploymentRow> {
  const { rows } = await db.query<DeploymentRow>(
    `INSERT INTO deployments
       (project_id, source_uid, revision, name, environment, branch, commit_sha, commit_message, status,
        started_at, workload_kind)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', COALESCE($9, clock_timestamp()), $10)
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
      deployment.workloadKind ?? "Deployment",
    ],
  );
  return rows[0] as DeploymentRow;
}

/**
 * The rollout (source_uid, revision), created pending when first seen, locked for this transaction.
 * Looked up before inserting: `INSERT … ON CONFLICT DO NOTHING` would draw an identity value on every
 * status change of the Deployment, and deployment ids are shown to users.
 */
export async function lockRollout(
  db: Queryable,
  rollout: NewDeployment & { sourceUid: string; revision: string },
): Promise<{ row: DeploymentRow; inserted: boolean }> {
  for (;;) {
    const found = await db.query<DeploymentRow>(
      `SELECT ${columns} FROM deployments WHERE source_uid = $1 AND revision = $2 FOR UPDATE`,
      [rollout.sourceUid, rollout.revision],
    );
    if (found.rows[0]) return { row: found.rows[0], inserted: false };
    const inserted = await db.query<DeploymentRow>(
      `INSERT INTO deployments
         (project_id, source_uid, revision, name, environment, branch, commit_sha, commit_message, status,
          started_at, workload_kind)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', COALESCE($9, clock_timestamp()), $10)
       ON CONFLICT (source_uid, revision) DO NOTHING
       RETURNING ${columns}`,
      [
        rollout.projectId,
        rollout.sourceUid,
        rollout.revision,
        rollout.name,
        rollout.environment,
        rollout.branch ?? null,
        rollout.commitSha ?? null,
        rollout.commitMessage ?? null,
        rollout.startedAt ?? null,
        rollout.workloadKind ?? "Deployment",
      ],
    );
    // Empty: a concurrent transaction inserted it first; the next pass waits for its lock.
    if (inserted.rows[0]) return { row: inserted.rows[0], inserted: true };
  }
}

export interface RolloutChanges {
  status: DeploymentStatus;
  emittedEvents: string[];
  url: string | null;
  errorMessage: string | null;
  finishedAt: Date | null;
}

export async function updateRollout(
  db: Queryable,
  id: number,
  changes: RolloutChanges,
): Promise<DeploymentRow> {
  const { rows } = await db.query<DeploymentRow>(
    `UPDATE deployments
        SET status = $2, emitted_events = $3, url = $4, error_message = $5, finished_at = $6,
            updated_at = greatest(clock_timestamp(), updated_at + interval '1 millisecond')
      WHERE id = $1 RETURNING ${columns}`,
    [id, changes.status, changes.emittedEvents, changes.url, changes.errorMessage, changes.finishedAt],
  );
  return rows[0] as DeploymentRow;
}

/**
 * Marks unfinished rollouts cancelled and returns them (locked): those of a workload (sourceUid)
 * older than `beforeRevision` when it is superseded, or all of them when it was deleted; or, after a
 * complete list of one kind, those of every workload of that kind missing from it.
 */
export async function cancelUnfinishedRollouts(
  db: Queryable,
  target:
    | { sourceUid: string; beforeRevision?: string }
    | { notInSourceUids: string[]; workloadKind: WorkloadKind },
): Promise<DeploymentRow[]> {
  const where =
    "notInSourceUids" in target
      ? "source_uid IS NOT NULL AND source_uid <> ALL ($1::text[]) AND workload_kind = $2"
      : "source_uid = $1 AND ($2::bigint IS NULL OR revision::bigint < $2::bigint)";
  const params =
    "notInSourceUids" in target
      ? [target.notInSourceUids, target.workloadKind]
      : [target.sourceUid, target.beforeRevision ?? null];
  const { rows } = await db.query<DeploymentRow>(
    `UPDATE deployments
        SET status = 'cancelled',
            -- On the rollout times' whole-second scale, never before started_at (rollout-times.ts).
            finished_at = greatest(date_trunc('second', clock_timestamp()), started_at),
            emitted_events = array_append(emitted_events, 'deployment.cancelled'),
            updated_at = greatest(clock_timestamp(), updated_at + interval '1 millisecond')
      WHERE ${where} AND status NOT IN ('succeeded', 'failed', 'cancelled')
      RETURNING ${columns}`,
    params,
  );
  return rows;
}
