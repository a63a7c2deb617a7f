import type { V1Ingress, V1IngressBackend, V1Service } from "@kubernetes/client-node";

// The public address of a Service as an Ingress or a Gateway API HTTPRoute exposes it (rollout-url.ts
// says which wins). Gateway API objects are custom resources: only the fields read here are typed.

export const gatewayGroup = "gateway.networking.k8s.io";

interface Reference {
  group?: string;
  kind?: string;
  namespace?: string;
  name: string;
  port?: number;
}

export interface HttpRoute {
  metadata: { name: string; namespace: string };
  spec?: {
    hostnames?: string[];
    parentRefs?: (Reference & { sectionName?: string })[];
    rules?: { matches?: { path?: { type?: string; value?: string } }[]; backendRefs?: Reference[] }[];
  };
}

export interface Gateway {
  metadata: { name: string; namespace: string };
  spec?: { listeners?: { name: string; hostname?: string; port: number; protocol: string }[] };
}

/** A host name a URL can carry: no wildcard (`*.example.com` names no one host). */
const literalHost = (host: string | undefined) => (host && !host.includes("*") ? host : undefined);
/** A path as written, not a pattern (an ImplementationSpecific or RegularExpression path may be a regex). */
const literalPath = (path: string | undefined) => (path && /^\/[\w\-./~%]*$/.test(path) ? path : "/");

const servesPort = (service: V1Service, port: { name?: string; number?: number } | undefined) =>
  (port?.name === undefined && port?.number === undefined) ||
  (service.spec?.ports ?? []).some((p) => p.port === port.number || (port.name && p.name === port.name));

const isTarget = (
  services: V1Service[],
  name: string | undefined,
  port?: { name?: string; number?: number },
) => services.some((service) => service.metadata?.name === name && servesPort(service, port));

/** A TLS entry covers the host when it lists it, lists a wildcard over it, or lists no hosts at all. */
function tlsCovers(ingress: V1Ingress, host: string): boolean {
  const matches = (pattern: string) =>
    pattern === host || (pattern.startsWith("*.") && host.slice(host.indexOf(".")) === pattern.slice(1));
  return (ingress.spec?.tls ?? []).some((tls) => !tls.hosts?.length || tls.hosts.some(matches));
}

/**
 * The first rule (in order) with a literal host whose paths reach one of `services`: https when the
 * Ingress's TLS covers that host. A rule without a host, and the default backend, use the address the
 * Ingress controller published in status (a host name, else an IP).
 */
export function ingressUrl(ingress: V1Ingress, services: V1Service[]): string | undefined {
  const published = ingress.status?.loadBalancer?.ingress?.[0];
  const publishedHost =
    published?.hostname ?? (published?.ip?.includes(":") ? `[${published.ip}]` : published?.ip);
  const reaches = (backend: V1IngressBackend | undefined) =>
    backend?.service !== undefined && isTarget(services, backend.service.name, backend.service.port);
  const url = (host: string, path: string | undefined) =>
    `${tlsCovers(ingress, host) ? "https" : "http"}://${host}${literalPath(path)}`;
  for (const rule of ingress.spec?.rules ?? []) {
    const host = literalHost(rule.host ?? publishedHost);
    const path = rule.http?.paths.find((candidate) => reaches(candidate.backend));
    if (host && path) return url(host, path.path);
  }
  if (publishedHost && reaches(ingress.spec?.defaultBackend)) return url(publishedHost, "/");
  return undefined;
}

/**
 * The first rule (in order) with a backend among `services` in the route's namespace, on the route's
 * first literal hostname (else its Gateway listener's), with the scheme and port of a listener of a
 * parent Gateway (HTTPS preferred). A route whose Gateway the operator cannot see gives no URL.
 */
export function httpRouteUrl(
  route: HttpRoute,
  services: V1Service[],
  gateway: (namespace: string, name: string) => Gateway | undefined,
): string | undefined {
  const { namespace } = route.metadata;
  const rule = route.spec?.rules?.find((candidate) =>
    candidate.backendRefs?.some(
      (ref) =>
        (ref.group ?? "") === "" &&
        (ref.kind ?? "Service") === "Service" &&
        (ref.namespace ?? namespace) === namespace &&
        isTarget(services, ref.name, { number: ref.port }),
    ),
  );
  if (!rule) return undefined;
  const listeners = (route.spec?.parentRefs ?? [])
    .filter((ref) => (ref.group ?? gatewayGroup) === gatewayGroup && (ref.kind ?? "Gateway") === "Gateway")
    .flatMap((ref) =>
      (gateway(ref.namespace ?? namespace, ref.name)?.spec?.listeners ?? []).filter(
        (listener) =>
          (ref.sectionName === undefined || listener.name === ref.sectionName) &&
          (ref.port === undefined || listener.port === ref.port),
      ),
    );
  const listener =
    listeners.find((l) => l.protocol === "HTTPS") ?? listeners.find((l) => l.protocol === "HTTP");
  const host = literalHost(route.spec?.hostnames?.find((name) => literalHost(name)) ?? listener?.hostname);
  if (!listener || !host) return undefined;
  const scheme = listener.protocol === "HTTPS" ? "https" : "http";
  const port = listener.port === (scheme === "https" ? 443 : 80) ? "" : `:${listener.port}`;
  const path = rule.matches?.find((match) => match.path?.type !== "RegularExpression")?.path?.value;
  return `${scheme}://${host}${port}${literalPath(path)}`;
}
