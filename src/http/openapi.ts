import { extendZodWithOpenApi, OpenAPIRegistry, OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";

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
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: {
      title: "webhook-operator API",
      version,
      description: "Project webhooks, delivery records, replay, and paginated lists. Paths sit under /api.",
    },
    servers: [{ url: "/api" }],
    security: [{ bearerAuth: [] }],
  });
}

export const errorResponseSchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: "not_found" }),
      message: z.string(),
      details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    }),
  })
  .openapi("Error");
