import { z } from "../http/openapi.js";
import { perPageQuery } from "../http/pagination.js";
import { isoTimestamp } from "../http/schemas.js";

/** The kinds of workload whose rollouts are deployments (docs/kubernetes.md). */
export const workloadKinds = ["Deployment", "StatefulSet", "DaemonSet"] as const;
export type WorkloadKind = (typeof workloadKinds)[number];

export const deploymentStatuses = ["pending", "ready", "succeeded", "failed", "cancelled"] as const;
export type DeploymentStatus = (typeof deploymentStatuses)[number];

export const deploymentSchema = z
  .object({
    id: z.number().int(),
    project_id: z.number().int(),
    name: z.string().openapi({ description: "Name of the workload (Deployment, StatefulSet or DaemonSet)" }),
    environment: z.string(),
    branch: z.string().nullable(),
    commit_sha: z.string().nullable(),
    commit_message: z.string().nullable(),
    url: z.string().nullable(),
    status: z.enum(deploymentStatuses),
    error_message: z.string().nullable(),
    started_at: isoTimestamp.nullable(),
    finished_at: isoTimestamp.nullable(),
    created_at: isoTimestamp,
    updated_at: isoTimestamp,
    workload_kind: z.enum(workloadKinds).optional().openapi({
      description: "The kind of the workload that rolled out; only with `include=workload`",
    }),
    workload_name: z.string().optional().openapi({
      description: "The workload's name (the same as `name`); only with `include=workload`",
    }),
  })
  .openapi("Deployment");

export const deploymentListSchema = z
  .object({
    deployments: z.array(deploymentSchema),
    total: z.number().int(),
    page: z.number().int(),
    per_page: z.number().int(),
  })
  .openapi("DeploymentList");

export const listDeploymentsQuery = perPageQuery.extend({
  include: z
    .enum(["workload"], { error: "include must be workload" })
    .optional()
    .openapi({ description: "`workload`: each deployment also says which workload rolled out" }),
});
