import type { Queryable } from "../db/pool.js";
import { ForbiddenError, NotFoundError } from "../errors.js";
import type { AuthContext, KubernetesTokenAuth } from "../http/auth-context.js";
import { findProject, listProjectNamespaces, type ProjectRow } from "./store.js";

// Who may use which project. API keys carry their project ids. Kubernetes tokens are authorised by RBAC
// in the project's namespace (its slug): a project is visible to a token that may `list` webhooks
// there, and each request needs its own verb (kube-auth/request-access.ts).

// SubjectAccessReviews in flight at once while filtering the project list.
const reviewConcurrency = 8;

async function mayList(auth: KubernetesTokenAuth, namespace: string): Promise<boolean> {
  return auth.reviewer.isAllowed(auth.identity, { namespace, verb: "list" });
}

/** Ids of the projects this caller may see; null for every project. */
export async function visibleProjectIds(db: Queryable, auth: AuthContext): Promise<number[] | null> {
  if (auth.method === "api_key") return auth.projectIds;
  if (await mayList(auth, "")) return null; // granted cluster-wide (a ClusterRoleBinding)
  const projects = await listProjectNamespaces(db);
  const visible: number[] = [];
  for (let start = 0; start < projects.length; start += reviewConcurrency) {
    const batch = projects.slice(start, start + reviewConcurrency);
    const allowed = await Promise.all(batch.map((project) => mayList(auth, project.slug)));
    visible.push(...batch.filter((_, index) => allowed[index]).map((project) => project.id));
  }
  return visible;
}

/**
 * The project, if the caller may make this request in it; otherwise 404 (another project's ids look
 * nonexistent) or 403 (authorizeProject).
 */
export async function requireProject(
  db: Queryable,
  auth: AuthContext,
  projectId: number,
): Promise<ProjectRow> {
  const project = await findProject(db, projectId);
  if (!project) throw new NotFoundError(`Project ${projectId} not found.`);
  await authorizeProject(db, auth, project);
  return project;
}

/**
 * Passes when the caller may make this request in the project. A project the caller may not see is
 * reported as nonexistent (404), like another project's id to a scoped key; a visible project answers
 * 403 for a verb the caller lacks, and so does a token that is granted no project at all.
 */
export async function authorizeProject(db: Queryable, auth: AuthContext, project: ProjectRow): Promise<void> {
  const notFound = new NotFoundError(`Project ${project.id} not found.`);
  if (auth.method === "api_key") {
    if (auth.projectIds !== null && !auth.projectIds.includes(project.id)) throw notFound;
    return;
  }
  const { identity, reviewer, access } = auth;
  if (await reviewer.isAllowed(identity, { ...access, namespace: project.slug })) return;
  const what = `${access.verb} webhooks${access.subresource ? `/${access.subresource}` : ""}`;
  const forbidden = new ForbiddenError(
    `${identity.username} may not ${what} (group webhook-operator.io) in namespace '${project.slug}'. ` +
      "Grant it with a RoleBinding in that namespace, e.g. to the ClusterRole webhook-operator-read-deliveries " +
      "or webhook-operator-manage-webhooks (README: Cluster tooling calls /api with its ServiceAccount token).",
  );
  if (await mayList(auth, project.slug)) throw forbidden;
  const visible = await visibleProjectIds(db, auth);
  if (visible !== null && visible.length === 0) throw forbidden;
  throw notFound;
}
