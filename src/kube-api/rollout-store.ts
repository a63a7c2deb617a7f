import type { Queryable } from "../db/pool.js";
import type { Position, Scope } from "./backend.js";
import { requirementsSql, type Selectable } from "./selectors.js";

/** A rollout (a deployment of the API): one revision of a workload, with the events it emitted. */
export interface RolloutRow {
  id: number;
  namespace: string;
  name: string;
  workload_kind: string;
  source_uid: string | null;
  revision: string | null;
  environment: string;
  branch: string | null;
  commit_sha: string | null;
  url: string | null;
  status: string;
  error_message: string | null;
  emitted_events: string[];
  started_at: Date | null;
  finished_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const rolloutSelect = `
  SELECT r.id::float8 AS id, p.slug AS namespace, r.name, r.workload_kind, r.source_uid, r.revision,
         r.environment, r.branch, r.commit_sha, r.url, r.status, r.error_message, r.emitted_events,
         r.started_at, r.finished_at, r.created_at, r.updated_at
    FROM deployments r
    JOIN projects p ON p.id = r.project_id AND p.from_namespace AND NOT p.withdrawn`;

export const rolloutSelectable: { labels: Selectable; fields: Selectable } = {
  labels: { workload: "r.name", kind: "r.workload_kind", phase: "r.status", environment: "r.environment" },
  fields: {
    "metadata.name": "r.id::text",
    "metadata.namespace": "p.slug",
    "spec.workload.name": "r.name",
    "spec.workload.kind": "r.workload_kind",
    "spec.environment": "r.environment",
    "status.phase": "r.status",
  },
};

export async function listRollouts(
  db: Queryable,
  scope: Scope,
  page: { limit: number; after: Position | undefined },
): Promise<RolloutRow[]> {
  const selectors = requirementsSql(scope.requirements, 5);
  const { rows } = await db.query<RolloutRow>(
    `${rolloutSelect}
      WHERE ($1::text IS NULL OR p.slug = $1) AND ($2::timestamptz IS NULL OR (r.created_at, r.id) < ($2, $3))${selectors.sql}
      ORDER BY r.created_at DESC, r.id DESC LIMIT $4`,
    [
      scope.namespace ?? null,
      page.after?.createdAt ?? null,
      page.after?.id ?? null,
      page.limit + 1,
      ...selectors.params,
    ],
  );
  return rows;
}

export async function findRollout(
  db: Queryable,
  namespace: string,
  id: number,
): Promise<RolloutRow | undefined> {
  const { rows } = await db.query<RolloutRow>(`${rolloutSelect} WHERE r.id = $1 AND p.slug = $2`, [
    id,
    namespace,
  ]);
  return rows[0];
}

/** Rollouts changed at or after `since` (updated_at moves with every event a rollout emits). */
export async function rolloutsChangedSince(db: Queryable, scope: Scope, since: Date): Promise<RolloutRow[]> {
  const selectors = requirementsSql(scope.requirements, 3);
  const { rows } = await db.query<RolloutRow>(
    `${rolloutSelect} WHERE ($1::text IS NULL OR p.slug = $1) AND r.updated_at >= $2${selectors.sql} ORDER BY r.updated_at, r.id`,
    [scope.namespace ?? null, since, ...selectors.params],
  );
  return rows;
}
