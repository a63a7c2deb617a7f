import type { V1Ingress, V1Service } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { noRouting, type Routing, rolloutUrl } from "../../src/operator/rollouts/rollout-url.js";
import type { Gateway, HttpRoute } from "../../src/operator/rollouts/route-urls.js";
import { deploymentFixture } from "../support/deployments.js";

// The order a rollout's url is chosen in, over objects as the operator's caches hold them.

const web = deploymentFixture({ name: "web", namespace: "shop" }); // pods labelled app=web
const meta = (name: string) => ({ name, namespace: "shop" });

const service = (name: string, spec: V1Service["spec"] = {}): V1Service => ({
  metadata: meta(name),
  spec: { selector: { app: "web" }, ports: [{ name: "http", port: 8080 }], ...spec },
});
const ingress = (name: string, spec: V1Ingress["spec"], status?: V1Ingress["status"]): V1Ingress => ({
  metadata: meta(name),
  spec,
  status,
});
const rule = (
  host: string | undefined,
  serviceName: string,
  path = "/",
  port: object = { number: 8080 },
) => ({
  host,
  http: { paths: [{ path, pathType: "Prefix", backend: { service: { name: serviceName, port } } }] },
});
const route = (name: string, spec: HttpRoute["spec"]): HttpRoute => ({ metadata: meta(name), spec });
const gateway = (name: string, listeners: NonNullable<Gateway["spec"]>["listeners"]): Gateway => ({
  metadata: meta(name),
  spec: { listeners },
});
const routeTo = (serviceName: string, extra: HttpRoute["spec"] = {}): HttpRoute["spec"] => ({
  parentRefs: [{ name: "public" }],
  rules: [{ backendRefs: [{ name: serviceName, port: 8080 }] }],
  ...extra,
});

function cluster(objects: {
  services?: V1Service[];
  ingresses?: V1Ingress[];
  routes?: HttpRoute[];
  gateways?: Gateway[];
}): Routing {
  return {
    services: (ns) => (objects.services ?? []).filter((o) => o.metadata?.namespace === ns),
    ingresses: (ns) => (objects.ingresses ?? []).filter((o) => o.metadata?.namespace === ns),
    httpRoutes: (ns) => (objects.routes ?? []).filter((o) => o.metadata.namespace === ns),
    gateway: (ns, name) =>
      objects.gateways?.find((o) => o.metadata.namespace === ns && o.metadata.name === name),
  };
}

const https = gateway("public", [
  { name: "web", port: 80, protocol: "HTTP" },
  { name: "tls", port: 443, protocol: "HTTPS" },
]);
const apiUrl = "https://kubernetes.default.svc/apis/apps/v1/namespaces/shop/deployments/web";

describe("rolloutUrl", () => {
  it.each<[string, Parameters<typeof cluster>[0], string]>([
    ["nothing routes to the pods: the Deployment's API URL", {}, apiUrl],
    [
      "a Service that selects other pods does not count",
      { services: [service("other", { selector: { app: "other" } })] },
      apiUrl,
    ],
    [
      "a Service that selects the pods: its cluster DNS name and first port",
      { services: [service("web")] },
      "http://web.shop.svc.cluster.local:8080",
    ],
    [
      "a Service port named https or 443 means https",
      { services: [service("web", { ports: [{ name: "https", port: 8443 }] })] },
      "https://web.shop.svc.cluster.local:8443",
    ],
    [
      "a ClusterIP Service before a headless one, else by name",
      { services: [service("a-headless", { clusterIP: "None" }), service("z-web"), service("b-web")] },
      "http://b-web.shop.svc.cluster.local:8080",
    ],
    [
      "an Ingress to the Service: its host and path, https when TLS covers the host",
      {
        services: [service("web")],
        ingresses: [
          ingress("web", {
            rules: [rule("shop.example.com", "web", "/store")],
            tls: [{ hosts: ["*.example.com"] }],
          }),
        ],
      },
      "https://shop.example.com/store",
    ],
    [
      "an Ingress without TLS is http; a wildcard host is skipped for the next rule",
      {
        services: [service("web")],
        ingresses: [
          ingress("web", { rules: [rule("*.example.com", "web"), rule("www.example.com", "web")] }),
        ],
      },
      "http://www.example.com/",
    ],
    [
      "an Ingress to another Service, or to a port the Service lacks, does not count",
      {
        services: [service("web"), service("admin", { selector: { app: "admin" } })],
        ingresses: [
          ingress("a", { rules: [rule("admin.example.com", "admin")] }),
          ingress("b", { rules: [rule("wrong-port.example.com", "web", "/", { number: 9999 })] }),
        ],
      },
      "http://web.shop.svc.cluster.local:8080",
    ],
    [
      "a rule without a host, and a regex path, use the published address and /",
      {
        services: [service("web")],
        ingresses: [
          ingress(
            "web",
            { rules: [rule(undefined, "web", "/(.*)", { name: "http" })] },
            {
              loadBalancer: { ingress: [{ ip: "203.0.113.7" }] },
            },
          ),
        ],
      },
      "http://203.0.113.7/",
    ],
    [
      "an HTTPRoute to the Service through an HTTPS listener of its Gateway",
      {
        services: [service("web")],
        routes: [
          route(
            "web",
            routeTo("web", {
              hostnames: ["*.example.com", "shop.example.com"],
              rules: [
                {
                  matches: [{ path: { type: "PathPrefix", value: "/v2" } }],
                  backendRefs: [{ name: "web", port: 8080 }],
                },
              ],
            }),
          ),
        ],
        gateways: [https],
      },
      "https://shop.example.com/v2",
    ],
    [
      "an HTTPRoute bound to an HTTP listener on a non-default port, named by sectionName",
      {
        services: [service("web")],
        routes: [
          route(
            "web",
            routeTo("web", {
              parentRefs: [{ name: "alt", sectionName: "plain" }],
              hostnames: ["shop.example.com"],
            }),
          ),
        ],
        gateways: [
          gateway("alt", [
            { name: "plain", port: 8000, protocol: "HTTP" },
            { name: "tls", port: 443, protocol: "HTTPS" },
          ]),
        ],
      },
      "http://shop.example.com:8000/",
    ],
    [
      "an HTTPRoute whose Gateway is not known gives way to the Service",
      {
        services: [service("web")],
        routes: [route("web", routeTo("web", { hostnames: ["shop.example.com"] }))],
      },
      "http://web.shop.svc.cluster.local:8080",
    ],
    [
      "an Ingress comes before an HTTPRoute",
      {
        services: [service("web")],
        ingresses: [ingress("z", { rules: [rule("ingress.example.com", "web")] })],
        routes: [route("a", routeTo("web", { hostnames: ["route.example.com"] }))],
        gateways: [https],
      },
      "http://ingress.example.com/",
    ],
    [
      "among Ingresses, the first by name",
      {
        services: [service("web")],
        ingresses: [
          ingress("b", { rules: [rule("b.example.com", "web")] }),
          ingress("a", { rules: [rule("a.example.com", "web")] }),
        ],
      },
      "http://a.example.com/",
    ],
  ])("%s", (_, objects, expected) => {
    expect(rolloutUrl(web, cluster(objects))).toBe(expected);
  });

  it("reads nothing but the Deployment's own namespace", () => {
    const elsewhere = { metadata: { name: "web", namespace: "other" }, spec: service("web").spec };
    expect(rolloutUrl(web, cluster({ services: [elsewhere] }))).toBe(apiUrl);
    expect(rolloutUrl(web, noRouting)).toBe(apiUrl);
  });
});
