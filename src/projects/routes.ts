import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import type { Pool } from "../db/pool.js";
import { isUniqueViolation } from "../db/sqlstate.js";
import { ConflictError } from "../errors.js";
import { requireAdmin } from "../http/auth-context.js";
import { addRoute } from "../http/route.js";
import { iso } from "../http/schemas.js";
import { visibleProjectIds } from "./access.js";
import { createProjectBody, listProjectsQuery, projectListSchema, projectSchema } from "./schemas.js";
import type { ProjectRow } from "./store.js";
import { insertProject, listProjects } from "./store.js";

export function toProjectJson(row: ProjectRow) {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    repo_url: row.repo_url,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export function registerProjectRoutes(router: Router, registry: OpenAPIRegistry, pool: Pool): void {
  addRoute(router, registry, {
    method: "get",
    path: "/projects",
    tag: "Projects",
    operationId: "listProjects",
    summary: "List projects",
    description:
      "One page of the projects the caller may see (`page`, `per_page` 1–100, default 10; outside that " +
      "range a 400), newest first, with the total. A key limited to projects, or a Kubernetes token, sees " +
      "only its own. In a cluster, projects are namespaces.",
    query: listProjectsQuery,
    responses: { 200: { description: "A page of projects", schema: projectListSchema } },
    handler: async ({ query, auth }) => {
      const { rows, total } = await listProjects(
        pool,
        { page: query.page, size: query.per_page },
        await visibleProjectIds(pool, auth),
      );
      return {
        status: 200,
        body: { projects: rows.map(toProjectJson), total, page: query.page, per_page: query.per_page },
      };
    },
  });

  addRoute(router, registry, {
    method: "post",
    path: "/projects",
    tag: "Projects",
    operationId: "createProject",
    summary: "Create a project",
    description:
      "For use without a cluster (in a cluster, projects are namespaces). Needs an admin key. `slug` is a " +
      "DNS label and unique (409 when taken).",
    body: createProjectBody,
    responses: {
      201: { description: "The created project", schema: projectSchema },
      403: { description: "The key is not an admin key" },
      409: { description: "The slug is taken" },
    },
    handler: async ({ body, auth }) => {
      requireAdmin(auth, "create projects");
      try {
        const row = await insertProject(pool, {
          name: body.name,
          slug: body.slug,
          repoUrl: body.repo_url ?? null,
        });
        return { status: 201, body: toProjectJson(row) };
      } catch (error) {
        if (isUniqueViolation(error))
          throw new ConflictError(`A project with slug '${body.slug}' already exists.`);
        throw error;
      }
    },
  });
}
