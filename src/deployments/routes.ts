import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import type { Pool } from "../db/pool.js";
import { addRoute } from "../http/route.js";
import { iso, projectParams } from "../http/schemas.js";
import { requireProject } from "../projects/access.js";
import { deploymentListSchema, listDeploymentsQuery } from "./schemas.js";
import type { DeploymentRow } from "./store.js";
import { listDeployments } from "./store.js";

export function toDeploymentJson(row: DeploymentRow, options: { workload?: boolean } = {}) {
  const json = {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    environment: row.environment,
    branch: row.branch,
    commit_sha: row.commit_sha,
    commit_message: row.commit_message,
    url: row.url,
    status: row.status,
    error_message: row.error_message,
    started_at: iso(row.started_at),
    finished_at: iso(row.finished_at),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
  // Opt-in, so the default answer stays as it was, byte for byte.
  return options.workload ? { ...json, workload_kind: row.workload_kind, workload_name: row.name } : json;
}

export function registerDeploymentRoutes(router: Router, registry: OpenAPIRegistry, pool: Pool): void {
  addRoute(router, registry, {
    method: "get",
    path: "/projects/{project_id}/deployments",
    tag: "Deployments",
    operationId: "listDeployments",
    summary: "List a project's deployments, newest first",
    description:
      "One page of the project's deployments (rollouts of its Deployments, StatefulSets and DaemonSets) with " +
      "their current status (`page`, `per_page` 1–100, default 10). With `include=workload` each also has " +
      "`workload_kind` (Deployment, StatefulSet or DaemonSet) and `workload_name`.",
    params: projectParams,
    query: listDeploymentsQuery,
    responses: { 200: { description: "A page of deployments", schema: deploymentListSchema } },
    handler: async ({ params, query, auth }) => {
      await requireProject(pool, auth, params.project_id);
      const { rows, total } = await listDeployments(pool, params.project_id, {
        page: query.page,
        size: query.per_page,
      });
      return {
        status: 200,
        body: {
          deployments: rows.map((row) => toDeploymentJson(row, { workload: query.include === "workload" })),
          total,
          page: query.page,
          per_page: query.per_page,
        },
      };
    },
  });
}
