import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import { z } from "../http/openapi.js";
import { addRoute } from "../http/route.js";

export const serviceInfoSchema = z
  .object({
    version: z.string().openapi({ example: "0.1.0" }),
    kubernetes: z.boolean().openapi({
      description:
        "true: the service runs against a Kubernetes cluster, its projects are namespaces and rollouts emit " +
        "the deployment.* events. false (standalone): projects are created through the API and only test " +
        "events and replays are delivered.",
    }),
    retry_delays_ms: z.array(z.number().int()).openapi({
      description:
        "The waits before automatic retries 1 to 5 of a webhook with a retry policy, in milliseconds, each " +
        "with ±20 % jitter: retry n waits retry_delays_ms[n-1] after attempt n failed.",
      example: [5000, 60000, 300000, 1800000, 7200000],
    }),
  })
  .openapi("ServiceInfo");

export type ServiceInfo = z.infer<typeof serviceInfoSchema>;

/** What a client needs to know about this installation to speak of it correctly (the dashboard does). */
export function registerServiceInfoRoute(router: Router, registry: OpenAPIRegistry, info: ServiceInfo): void {
  addRoute(router, registry, {
    method: "get",
    path: "/service-info",
    operationId: "getServiceInfo",
    tag: "Service",
    summary: "Describe this installation",
    description:
      "The service's version, whether it runs against a Kubernetes cluster, and the waits between automatic " +
      "retries. Any valid key may read it.",
    responses: { 200: { description: "This installation", schema: serviceInfoSchema } },
    handler: async () => ({ status: 200, body: info }),
  });
}
