import { extendZodWithOpenApi, OpenAPIRegistry, OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import { forGenerators } from "./openapi-generators.js";

extendZodWithOpenApi(z);

export { z };

export function createRegistry(): OpenAPIRegistry {
  const registry = new OpenAPIRegistry();
  registry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description:
      "`Authorization: Bearer <API key or Kubernetes token>`; a token must be issued for the audience " +
      "KUBERNETES_TOKEN_AUDIENCE (default webhook-operator) and is authorised by RBAC",
  });
  return registry;
}

export function generateOpenApiDocument(registry: OpenAPIRegistry, version: string) {
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: {
      title: "webhook-operator API",
      version,
      description:
        "Webhooks of projects, the records of their deliveries, replays and test events, and paginated " +
        "lists. Paths sit under /api; every operation takes `Authorization: Bearer <API key>`. A failure " +
        'answers `{"error": {"code", "message", "details"?}}`; `details` lists the invalid fields of a 400. ' +
        "A query parameter an operation does not list is a 400 naming it. Paging and generated clients: " +
        "docs/api.md.",
      license: { name: "Apache-2.0", identifier: "Apache-2.0" },
    },
    // The service's root, not /api: the deliveries list's Link header holds a root-relative /api/…
    // address, which a client joins to this server URL as it joins any path of this document.
    servers: [{ url: "/", description: "The service's root; give a generated client http(s)://host:port" }],
    security: [{ bearerAuth: [] }],
    tags: [
      {
        name: "Webhooks",
        description: "Where a project's events are delivered, signed with which secret, and how",
      },
      {
        name: "Deliveries",
        description: "Every delivery attempt: its record, replays, recovery, health over time",
      },
      {
        name: "Projects",
        description: "Projects own webhooks; in a Kubernetes cluster they are its namespaces",
      },
      {
        name: "Deployments",
        description: "Rollouts of Kubernetes Deployments, which emit the deployment.* events",
      },
      { name: "API keys", description: "Admin keys, and keys limited to some projects" },
      { name: "Service", description: "This installation: its version, and whether it runs in a cluster" },
    ],
  });
  return forGenerators(document);
}

export const errorResponseSchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: "not_found" }),
      message: z.string(),
      details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
      id: z.string().optional().openapi({
        description: "On a 500 only: the id the service's log line of the failure also carries (error_id)",
      }),
    }),
  })
  // Not "Error": generated clients would name a class after it (java.lang.Error, Python's models.Error).
  .openapi("ErrorResponse");
