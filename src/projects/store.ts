import { type PageRequest, selectPage } from "../db/page.js";
import type { Queryable } from "../db/pool.js";

export interface ProjectRow {
  id: number;
  name: string;
  slug: string;
  repo_url: string | null;
  created_at: Date;
  updated_at: Date;
}

const columns = "id, name, slug, repo_url, created_at, updated_at";

// Withdrawn projects (namespaces the selector no longer matches; migration 012) are invisible to every
// reader below but the operator's own statements.

/** projectIds null = every project (admin key). Newest first; id breaks ties so pages are stable. */
export function listProjects(
  db: Queryable,
  page: PageRequest,
  projectIds: number[] | null,
): Promise<{ rows: ProjectRow[]; total: number }> {
  return selectPage<ProjectRow>(
    db,
    {
      columns,
      from: "projects WHERE NOT withdrawn AND ($1::bigint[] IS NULL OR id = ANY($1))",
      orderBy: "created_at DESC, id DESC",
      params: [projectIds],
    },
    page,
  );
}

/** Every project's id and slug (its namespace), for filtering by Kubernetes RBAC. */
export async function listProjectNamespaces(db: Queryable): Promise<Pick<ProjectRow, "id" | "slug">[]> {
  const { rows } = await db.query<Pick<ProjectRow, "id" | "slug">>(
    "SELECT id, slug FROM projects WHERE NOT withdrawn ORDER BY id",
  );
  return rows;
}

export async function findProject(db: Queryable, id: number): Promise<ProjectRow | undefined> {
  const { rows } = await db.query<ProjectRow>(
    `SELECT ${columns} FROM projects WHERE id = $1 AND NOT withdrawn`,
    [id],
  );
  return rows[0];
}

/** Which of `ids` name a (visible) project. */
export async function existingProjectIds(db: Queryable, ids: number[]): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>(
    "SELECT id FROM projects WHERE id = ANY ($1) AND NOT withdrawn",
    [ids],
  );
  return rows.map((row) => row.id);
}

/** The names of the projects `ids`, withdrawn ones too (a rollout's events name its project). */
export async function projectNames(db: Queryable, ids: number[]): Promise<Map<number, string>> {
  const { rows } = await db.query<{ id: number; name: string }>(
    "SELECT id, name FROM projects WHERE id = ANY ($1)",
    [ids],
  );
  return new Map(rows.map((project) => [project.id, project.name]));
}

/**
 * Locks the project's row until the transaction ends, against other writers of its webhooks: two
 * creates in one project take turns (webhooks/store.ts, insertWebhookWithinLimit).
 */
export async function lockProjectForWebhooks(db: Queryable, id: number): Promise<void> {
  await db.query("SELECT 1 FROM projects WHERE id = $1 FOR NO KEY UPDATE", [id]);
}

export async function insertProject(
  db: Queryable,
  project: { name: string; slug: string; repoUrl: string | null },
): Promise<ProjectRow> {
  const { rows } = await db.query<ProjectRow>(
    `INSERT INTO projects (name, slug, repo_url) VALUES ($1, $2, $3) RETURNING ${columns}`,
    [project.name, project.slug, project.repoUrl],
  );
  return rows[0] as ProjectRow;
}

/**
 * The project of a selected Kubernetes namespace (slug = namespace name), created on first sight and
 * shown again if it was withdrawn. Its name and repo_url follow the namespace's annotations, and go
 * back to the defaults (the namespace name, null) when an annotation is removed. The INSERT runs only
 * when no project has the slug yet (an `ON CONFLICT` upsert would draw an identity value on every call).
 */
export async function ensureNamespaceProject(
  db: Queryable,
  namespace: { name: string; displayName: string | null; repoUrl: string | null },
): Promise<ProjectRow> {
  for (;;) {
    const { rows } = await db.query<ProjectRow>(
      `WITH existing AS (SELECT ${columns} FROM projects WHERE slug = $1),
       updated AS (
         UPDATE projects SET name = COALESCE($2, $1), repo_url = $3, from_namespace = true,
                             withdrawn = false, updated_at = clock_timestamp()
          WHERE slug = $1
            AND (name, repo_url, from_namespace, withdrawn) IS DISTINCT FROM (COALESCE($2, $1), $3, true, false)
          RETURNING ${columns}),
       inserted AS (
         INSERT INTO projects (name, slug, repo_url, from_namespace)
         SELECT COALESCE($2, $1), $1, $3, true WHERE NOT EXISTS (SELECT 1 FROM existing)
         ON CONFLICT (slug) DO NOTHING
         RETURNING ${columns})
       SELECT * FROM updated
       UNION ALL SELECT * FROM existing WHERE NOT EXISTS (SELECT 1 FROM updated)
       UNION ALL SELECT * FROM inserted`,
      [namespace.name, namespace.displayName, namespace.repoUrl],
    );
    if (rows[0]) return rows[0];
  }
}

/** Withdraws the project of a namespace the selector no longer matches; false when there was none. */
export async function withdrawNamespaceProject(db: Queryable, namespace: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE projects SET withdrawn = true, updated_at = clock_timestamp()
      WHERE from_namespace AND NOT withdrawn AND slug = $1`,
    [namespace],
  );
  return rowCount === 1;
}

/**
 * After a complete list of namespaces: withdraws every namespace's project whose slug is not among the
 * `selected` namespaces, and shows again the withdrawn ones that are. Returns the slugs it changed.
 */
export async function applyNamespaceSelection(
  db: Queryable,
  selected: string[],
): Promise<{ withdrawn: string[]; restored: string[] }> {
  const { rows } = await db.query<{ slug: string; withdrawn: boolean }>(
    `UPDATE projects SET withdrawn = NOT (slug = ANY($1::text[])), updated_at = clock_timestamp()
      WHERE from_namespace AND withdrawn = (slug = ANY($1::text[]))
      RETURNING slug, withdrawn`,
    [selected],
  );
  return {
    withdrawn: rows.filter((row) => row.withdrawn).map((row) => row.slug),
    restored: rows.filter((row) => !row.withdrawn).map((row) => row.slug),
  };
}

/**
 * Removes the projects of namespaces that no longer exist (slugs not in `namespaces`, the complete
 * list from a successful full list, or everything but the present ones after a delete event), with
 * their webhooks, deliveries and rollouts. Projects created through the API are kept.
 */
export async function deleteProjectsOfMissingNamespaces(
  db: Queryable,
  namespaces: string[],
): Promise<string[]> {
  const { rows } = await db.query<{ slug: string }>(
    "DELETE FROM projects WHERE from_namespace AND NOT (slug = ANY($1::text[])) RETURNING slug",
    [namespaces],
  );
  return rows.map((row) => row.slug);
}

/** Removes the project of one deleted namespace (see deleteProjectsOfMissingNamespaces). */
export async function deleteNamespaceProject(db: Queryable, namespace: string): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM projects WHERE from_namespace AND slug = $1", [namespace]);
  return rowCount === 1;
}
