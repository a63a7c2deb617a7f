import type { KubeConfig } from "@kubernetes/client-node";

type RequestContext = Parameters<KubeConfig["applySecurityAuthentication"]>[0];
type Dispatcher = NonNullable<ReturnType<RequestContext["getDispatcher"]>>;

const patched = new WeakSet<KubeConfig>();

/**
 * Makes every request made through `kubeConfig` (API clients from makeApiClient, informers' lists and
 * watches) share one connection pool. client-node 2.0.1 builds a new undici Agent inside
 * applySecurityAuthentication for every request to a cluster with any TLS setting (a CA, a client
 * certificate, or insecure-skip-tls-verify — every real cluster), so every API call opened a new
 * connection (and, against a real API server, did a full TLS handshake); measured against the fake API
 * server (bench/operator.ts), connection set-up was the largest single CPU cost of reconciling Webhooks.
 *
 * The first Agent made for a cluster+user is kept and reused for the KubeConfig's life, as client-go
 * caches its transport by TLS configuration; a changed cluster or user (another context, refreshed
 * exec/auth-provider credentials) gets an Agent of its own.
 */
export function shareConnections(kubeConfig: KubeConfig): KubeConfig {
  if (patched.has(kubeConfig)) return kubeConfig;
  patched.add(kubeConfig);
  const apply = kubeConfig.applySecurityAuthentication.bind(kubeConfig);
  const dispatchers = new Map<string, Dispatcher>();
  kubeConfig.applySecurityAuthentication = async (context: RequestContext) => {
    await apply(context);
    const fresh = context.getDispatcher();
    if (!fresh) return;
    const key = JSON.stringify([kubeConfig.getCurrentCluster(), kubeConfig.getCurrentUser()]);
    const shared = dispatchers.get(key);
    if (shared) context.setDispatcher(shared);
    else dispatchers.set(key, fresh);
  };
  return kubeConfig;
}
