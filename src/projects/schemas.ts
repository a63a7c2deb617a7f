import { z } from "../http/openapi.js";
import { perPageQuery } from "../http/pagination.js";
import { displayName, httpUrl, isoTimestamp } from "../http/schemas.js";

export const projectSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    slug: z.string(),
    repo_url: z.string().nullable(),
    created_at: isoTimestamp,
    updated_at: isoTimestamp,
  })
  .openapi("Project");

export const projectListSchema = z
  .object({
    projects: z.array(projectSchema),
    total: z.number().int(),
    page: z.number().int(),
    per_page: z.number().int(),
  })
  .openapi("ProjectList");

export const createProjectBody = z
  .strictObject({
    name: displayName("name"),
    slug: z
      .string({ error: "slug is required" })
      .max(63, "slug must be at most 63 characters")
      .regex(
        /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
        "slug must be a DNS label: lowercase letters, digits and '-'",
      ),
    repo_url: httpUrl("repo_url", "repo_url must not be empty: leave it out, or send null")
      .nullable()
      .optional(),
  })
  .openapi("CreateProject");

export const listProjectsQuery = perPageQuery;
