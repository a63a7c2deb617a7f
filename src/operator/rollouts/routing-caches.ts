import type {
  CoreV1Api,
  CustomObjectsApi,
  KubernetesListObject,
  KubernetesObject,
  NetworkingV1Api,
  V1Ingress,
  V1Service,
} from "@kubernetes/client-node";
import { type Logger, logRetry } from "../../logger.js";
import type { ResilientInformer } from "../informer.js";
import { isNotFound } from "../kube-errors.js";
import type { Routing } from "./rollout-url.js";
import { type Gateway, gatewayGroup, type HttpRoute } from "./route-urls.js";

type InformerOf = <T extends KubernetesObject>(
  resource: string,
  path: string,
  list: () => Promise<KubernetesListObject<T>>,
) => ResilientInformer<T>;

/**
 * Informers on Services, Ingresses and (where the Gateway API is installed) HTTPRoutes and Gateways,
 * so a rollout's URL (rollout-url.ts) is read from caches: no API request per rollout. The Gateway API
 * is optional: until its HTTPRoutes are served, it is looked for again at every re-list interval, and
 * its absence is no error.
 */
export function routingCaches(options: {
  informer: InformerOf;
  core: CoreV1Api;
  networking: NetworkingV1Api;
  customObjects: CustomObjectsApi;
  relistIntervalMs: number;
  logger: Logger;
}) {
  const { informer, customObjects, logger } = options;
  const services = informer<V1Service>("services", "/api/v1/services", () =>
    options.core.listServiceForAllNamespaces(),
  );
  const ingresses = informer<V1Ingress>("ingresses", "/apis/networking.k8s.io/v1/ingresses", () =>
    options.networking.listIngressForAllNamespaces(),
  );
  const gatewayApi = (plural: string) =>
    informer<KubernetesObject>(plural, `/apis/${gatewayGroup}/v1/${plural}`, () =>
      customObjects.listClusterCustomObject({ group: gatewayGroup, version: "v1", plural }),
    );
  let gatewayInformers:
    | { routes: ResilientInformer<KubernetesObject>; gateways: ResilientInformer<KubernetesObject> }
    | undefined;
  let lookAgain: NodeJS.Timeout | undefined;
  let stopped = false;

  async function startGatewayApiWhenServed(): Promise<void> {
    try {
      await customObjects.listClusterCustomObject({
        group: gatewayGroup,
        version: "v1",
        plural: "httproutes",
        limit: 1,
      });
    } catch (error) {
      if (!isNotFound(error))
        logRetry(
          logger,
          error,
          { resource: "httproutes" },
          "reading HTTPRoutes failed; rollout URLs do without them",
        );
      return;
    }
    clearInterval(lookAgain);
    if (stopped || gatewayInformers) return;
    gatewayInformers = { routes: gatewayApi("httproutes"), gateways: gatewayApi("gateways") };
    await Promise.all([gatewayInformers.routes.start(), gatewayInformers.gateways.start()]);
    logger.info("the Gateway API is served: rollout URLs include HTTPRoutes");
  }

  const routing: Routing = {
    services: (namespace) => services.informer.list(namespace),
    ingresses: (namespace) => ingresses.informer.list(namespace),
    // Custom objects arrive as plain JSON, hence the casts.
    httpRoutes: (namespace) =>
      (gatewayInformers?.routes.informer.list(namespace) ?? []) as unknown as HttpRoute[],
    gateway: (namespace, name) =>
      gatewayInformers?.gateways.informer.get(name, namespace) as unknown as Gateway | undefined,
  };

  return {
    routing,
    async start() {
      await Promise.all([services.start(), ingresses.start(), startGatewayApiWhenServed()]);
      if (!gatewayInformers) {
        lookAgain = setInterval(() => void startGatewayApiWhenServed(), options.relistIntervalMs);
        lookAgain.unref();
      }
    },
    async stop() {
      stopped = true;
      clearInterval(lookAgain);
      await Promise.all([
        services.stop(),
        ingresses.stop(),
        gatewayInformers?.routes.stop(),
        gatewayInformers?.gateways.stop(),
      ]);
    },
  };
}
