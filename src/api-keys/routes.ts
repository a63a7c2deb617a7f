import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import type { Pool } from "../db/pool.js";
import { NotFoundError } from "../errors.js";
import { requireAdmin } from "../http/auth-context.js";
import { z } from "../http/openapi.js";
import { addRoute } from "../http/route.js";
import { displayName, idParam, iso, isoTimestamp, positiveId } from "../http/schemas.js";
import { existingProjectIds } from "../projects/store.js";
import type { ApiKeyChecks } from "./auth.js";
import { generateApiKey, hashApiKey } from "./keys.js";
import type { ApiKeyRow } from "./store.js";
import { deleteApiKey, insertApiKey, listApiKeys } from "./store.js";

const apiKeyFields = {
  id: z.number().int(),
  name: z.string(),
  project_ids: z.array(z.number().int()).nullable().openapi({ description: "null: an admin key" }),
  created_at: isoTimestamp,
  last_used_at: isoTimestamp.nullable(),
};
const apiKeySchema = z.object(apiKeyFields).openapi("ApiKey");

// The fields spelt out rather than an `allOf` of ApiKey: generators flattening an allOf lose its null
// types (openapi-generator).
const createdApiKeySchema = z
  .object({
    ...apiKeyFields,
    key: z.string().openapi({ description: "The key itself; shown only in this response" }),
  })
  .openapi("CreatedApiKey");

const createApiKeyBody = z
  .strictObject({
    name: displayName("name"),
    project_ids: z
      .array(positiveId("project_ids[]"), { error: "project_ids must be an array of project ids" })
      .min(1, "project_ids must name at least one project; omit it for an admin key")
      .nullable()
      .optional(),
  })
  .openapi("CreateApiKey");

function toApiKeyJson(row: ApiKeyRow) {
  return {
    id: row.id,
    name: row.name,
    project_ids: row.project_ids,
    created_at: iso(row.created_at),
    last_used_at: iso(row.last_used_at),
  };
}

const tag = "API keys";

/** Key management, an addition to the spec: admin keys issue project-scoped keys. */
export function registerApiKeyRoutes(
  router: Router,
  registry: OpenAPIRegistry,
  pool: Pool,
  keys: ApiKeyChecks,
): void {
  addRoute(router, registry, {
    method: "post",
    path: "/api-keys",
    tag,
    operationId: "createApiKey",
    summary: "Issue an API key",
    description:
      "Needs an admin key. Without `project_ids` the new key is an admin key; with them it is limited to " +
      "those projects (an unknown project id answers 404). The key is in this response only: it is stored " +
      "as a digest.",
    body: createApiKeyBody,
    responses: {
      201: { description: "The key, shown only once", schema: createdApiKeySchema },
      403: { description: "Not an admin key" },
    },
    handler: async ({ body, auth }) => {
      requireAdmin(auth, "issue API keys");
      const key = generateApiKey();
      const projectIds = body.project_ids ? [...new Set(body.project_ids)] : null;
      if (projectIds) {
        const existing = await existingProjectIds(pool, projectIds);
        const unknown = projectIds.filter((id) => !existing.includes(id));
        // Well-formed ids that name nothing: 404, like any unknown id in a path.
        if (unknown.length > 0) throw new NotFoundError(`Unknown project ids: ${unknown.join(", ")}.`);
      }
      const keyHash = hashApiKey(key);
      const row = await insertApiKey(pool, { name: body.name, keyHash, projectIds });
      keys.known.added(keyHash);
      return { status: 201, body: { ...toApiKeyJson(row), key } };
    },
  });

  addRoute(router, registry, {
    method: "get",
    path: "/api-keys",
    tag,
    operationId: "listApiKeys",
    summary: "List API keys",
    description: "Needs an admin key. Names, scopes and dates of the keys, never the keys themselves.",
    responses: {
      200: { description: "API keys", schema: z.array(apiKeySchema) },
      403: { description: "Not an admin key" },
    },
    handler: async ({ auth }) => {
      requireAdmin(auth, "list API keys");
      return { status: 200, body: (await listApiKeys(pool)).map(toApiKeyJson) };
    },
  });

  addRoute(router, registry, {
    method: "delete",
    path: "/api-keys/{api_key_id}",
    tag,
    operationId: "revokeApiKey",
    summary: "Revoke an API key",
    description:
      "Needs an admin key. The key stops working at once on the replica that answers, and within " +
      "`API_KEY_CACHE_TTL_MS` (5 s by default) on the others, which remember keys they verified that long.",
    params: z.object({ api_key_id: idParam("api_key_id") }),
    responses: { 204: { description: "Revoked" }, 403: { description: "Not an admin key" } },
    handler: async ({ params, auth }) => {
      requireAdmin(auth, "revoke API keys");
      if (!(await deleteApiKey(pool, params.api_key_id))) {
        throw new NotFoundError(`API key ${params.api_key_id} not found.`);
      }
      keys.verified.forget(params.api_key_id);
      return { status: 204 };
    },
  });
}
