import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { Logger } from "../logger.js";
import type { AccessDecider } from "./authorizer.js";
import type { ReadableResource } from "./backend.js";
import { type Caller, callerOf, type FrontProxySettings } from "./front-proxy.js";
import { getOne, listOrWatch, type ReadRequest, sendJson } from "./read-handlers.js";
import type { ReplayCreator } from "./replays.js";
import {
  apiGroupDocument,
  apiGroupList,
  apiResourceList,
  group,
  groupVersion,
  isResourceName,
  resources,
} from "./resources.js";
import { forbidden, KubeStatusError } from "./status.js";

export interface AggregatedApiParts {
  frontProxy: FrontProxySettings;
  access: AccessDecider;
  deliveries: ReadableResource<unknown>;
  rollouts: ReadableResource<unknown>;
  replays: ReplayCreator;
  logger: Logger;
}

// /apis/deliveries.webhook-operator.io/v1alpha1[/namespaces/{namespace}]/{resource}[/{name}]
const resourcePath = new RegExp(
  `^/apis/${group.replaceAll(".", "\\.")}/v1alpha1(?:/namespaces/([^/]+))?/([^/]+)(?:/([^/]+))?/?$`,
);

const discovery: Record<string, () => unknown> = {
  "/apis": apiGroupList,
  [`/apis/${group}`]: apiGroupDocument,
  [`/apis/${groupVersion}`]: apiResourceList,
};

async function authorise(
  parts: AggregatedApiParts,
  caller: Caller,
  verb: string,
  resource: string,
  namespace: string | undefined,
  name?: string,
) {
  if (!(await parts.access.isAllowed(caller, { verb, resource, namespace, name }))) {
    throw forbidden(caller.user, verb, resource, group, namespace, name);
  }
}

async function handle(parts: AggregatedApiParts, request: IncomingMessage, response: ServerResponse) {
  const url = new URL(request.url ?? "/", "https://aggregated-api.invalid");
  const path = url.pathname.replace(/\/+$/, "") || "/";
  if (path === "/healthz" || path === "/readyz" || path === "/livez") {
    response.writeHead(200, { "Content-Type": "text/plain" }).end("ok");
    return;
  }
  const caller = callerOf(request, parts.frontProxy);
  const document = discovery[path];
  // The aggregation layer first asks /apis for aggregated discovery (apidiscovery.k8s.io/v2); a 406
  // sends it to /apis/<group>/<version>, the APIResourceList, which is all there is to discover here.
  if (document && /as=APIGroupDiscoveryList/.test(request.headers.accept ?? "")) {
    throw new KubeStatusError(
      "NotAcceptable",
      "aggregated discovery is not served; read /apis/<group>/<version>",
    );
  }
  // Discovery is served to whoever the front proxy vouches for, as kube-apiserver serves it to every
  // authenticated user (ClusterRole system:discovery). No review: the aggregation layer's own discovery
  // request names its user without the groups RBAC would need.
  if (document) {
    sendJson(response, 200, document());
    return;
  }
  const match = resourcePath.exec(path);
  const [, namespace, resourceName = "", name] = match ?? [];
  if (!match || !isResourceName(resourceName)) {
    throw new KubeStatusError(
      "NotFound",
      `the server could not find the requested resource (${request.method} ${path})`,
    );
  }
  const info = resources[resourceName];
  const method = request.method ?? "GET";
  if (resourceName === "deliveryreplays") {
    if (method !== "POST" || name || !namespace)
      throw new KubeStatusError("MethodNotAllowed", `${resourceName} can only be created, in a namespace`);
    await authorise(parts, caller, "create", resourceName, namespace);
    await parts.replays.create(request, response, namespace, url.searchParams);
    return;
  }
  if (method !== "GET")
    throw new KubeStatusError("MethodNotAllowed", `${resourceName} are read-only: get, list and watch`);
  const read: ReadRequest = { request, response, query: url.searchParams, namespace, info };
  const resource = resourceName === "deliveries" ? parts.deliveries : parts.rollouts;
  const watching = url.searchParams.get("watch") === "true" || url.searchParams.get("watch") === "1";
  if (name) {
    await authorise(parts, caller, "get", resourceName, namespace, name);
    await getOne(resource, read, decodeURIComponent(name));
    return;
  }
  await authorise(parts, caller, watching ? "watch" : "list", resourceName, namespace);
  await listOrWatch(resource, read, parts.logger);
}

/** The HTTPS server the aggregation layer calls; its client certificate is checked in the handshake. */
export function createAggregatedApiServer(
  parts: AggregatedApiParts,
  tls: { certFile: string; keyFile: string },
): Server {
  const server = createServer(
    {
      cert: readFileSync(tls.certFile),
      key: readFileSync(tls.keyFile),
      ca: parts.frontProxy.clientCa,
      requestCert: true,
      // Verified, but not required by TLS: a request without the front proxy's certificate gets a
      // Status 401 that says why, rather than a handshake failure. /healthz needs none.
      rejectUnauthorized: false,
    },
    (request, response) => {
      handle(parts, request, response).catch((error: unknown) => {
        const status = error instanceof KubeStatusError ? error : undefined;
        if (!status)
          parts.logger.error(
            { err: error, path: request.url?.split("?")[0] },
            "aggregated API: request failed",
          );
        const answer =
          status ??
          new KubeStatusError("InternalError", "an internal error occurred; the operator's log says more");
        if (response.headersSent) response.end();
        else sendJson(response, answer.code, answer.toStatus());
      });
    },
  );
  return server;
}
