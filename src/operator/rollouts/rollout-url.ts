import type { V1Ingress, V1Service } from "@kubernetes/client-node";
import { type Gateway, type HttpRoute, httpRouteUrl, ingressUrl } from "./route-urls.js";
import { resourceOfKind, type Workload, type WorkloadKind } from "./workload-kinds.js";

/** What routes traffic in the cluster, as the operator's caches hold it (routing-caches.ts). */
export interface Routing {
  services(namespace: string): readonly V1Service[];
  ingresses(namespace: string): readonly V1Ingress[];
  /** Empty where the Gateway API is not installed. */
  httpRoutes(namespace: string): readonly HttpRoute[];
  gateway(namespace: string, name: string): Gateway | undefined;
}

/** A cluster where nothing routes to anything: every rollout gets its Deployment's own URL. */
export const noRouting: Routing = {
  services: () => [],
  ingresses: () => [],
  httpRoutes: () => [],
  gateway: () => undefined,
};

const byName = <T extends { metadata?: { name?: string } }>(objects: readonly T[]): T[] =>
  [...objects].sort((a, b) => (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""));

/** Services that select the workload's pods (every selector label on its pod template), ClusterIP first. */
function selectingServices(workload: Workload, services: readonly V1Service[]): V1Service[] {
  const labels = workload.spec?.template?.metadata?.labels ?? {};
  const headless = (service: V1Service) => (service.spec?.clusterIP === "None" ? 1 : 0);
  return byName(
    services.filter((service) => {
      const selector = Object.entries(service.spec?.selector ?? {});
      return selector.length > 0 && selector.every(([key, value]) => labels[key] === value);
    }),
  ).sort((a, b) => headless(a) - headless(b));
}

/** The Service's cluster DNS name and first port; https when that port says so (443, or named https). */
function serviceUrl(service: V1Service): string | undefined {
  const port = service.spec?.ports?.[0];
  if (!port) return undefined;
  const secure =
    port.port === 443 || [port.name, port.appProtocol].some((name) => /^https\b/i.test(name ?? ""));
  const host = `${service.metadata?.name}.${service.metadata?.namespace}.svc.cluster.local`;
  return `${secure ? "https" : "http"}://${host}:${port.port}`;
}

/** The workload as the Kubernetes API names it, for a workload nothing routes to. */
const workloadApiUrl = (namespace: string, name: string, kind: WorkloadKind) =>
  `https://kubernetes.default.svc/apis/apps/v1/namespaces/${namespace}/${resourceOfKind[kind]}/${name}`;

/**
 * The address of a workload that has no url annotation, from what the cluster routes to its pods:
 * 1. an Ingress (networking.k8s.io/v1) with a backend that is a Service selecting the pods;
 * 2. else a Gateway API HTTPRoute (gateway.networking.k8s.io/v1) with such a backend;
 * 3. else such a Service itself, by its cluster DNS name;
 * 4. else the workload's own Kubernetes API URL: stable, and it names what was deployed.
 * Objects of one kind are tried by name, so the answer does not depend on the order of the caches.
 */
export function rolloutUrl(workload: Workload, routing: Routing, kind: WorkloadKind = "Deployment"): string {
  const namespace = workload.metadata?.namespace ?? "";
  const services = selectingServices(workload, routing.services(namespace));
  const candidates =
    services.length === 0
      ? []
      : [
          ...byName(routing.ingresses(namespace)).map((ingress) => () => ingressUrl(ingress, services)),
          ...byName(routing.httpRoutes(namespace)).map(
            (route) => () => httpRouteUrl(route, services, routing.gateway),
          ),
          ...services.map((service) => () => serviceUrl(service)),
        ];
  for (const candidate of candidates) {
    const url = candidate();
    if (url) return url;
  }
  return workloadApiUrl(namespace, workload.metadata?.name ?? "", kind);
}
