import { KubeConfig } from "@kubernetes/client-node";

type RequestContext = Parameters<KubeConfig["applySecurityAuthentication"]>[0];
type Dispatcher = NonNullable<ReturnType<RequestContext["getDispatcher"]>>;

/**
 * A KubeConfig whose requests (API clients from makeApiClient, informers' lists and watches) share one
 * connection pool per cluster and user. client-node 2.0.1 (the latest) builds a new undici Agent in
 * applySecurityAuthentication for every request to a cluster with any TLS setting (a CA, a client
 * certificate, or insecure-skip-tls-verify — every real cluster), so every API call opens a new
 * connection and does a full TLS handshake. Measured against the real API server of the cluster suite:
 * 50 sequential calls left 50 sockets open to it with client-node's own KubeConfig (each Agent keeps
 * its idle connection alive), 1 through this one; test/cluster/kube-connections.test.ts counts the
 * handshakes at a proxy, and fails once client-node reuses connections itself.
 *
 * The first Agent made for a cluster+user is kept and reused, as client-go caches its transport by TLS
 * configuration; another cluster or user (a context switch) gets an Agent of its own. Headers
 * (tokens, refreshed exec/auth-provider credentials) are still applied by client-node per request.
 */
export class ConnectionSharingKubeConfig extends KubeConfig {
  private readonly dispatchers = new Map<string, Dispatcher>();

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const fresh = context.getDispatcher();
    if (!fresh) return;
    const key = JSON.stringify([this.getCurrentCluster(), this.getCurrentUser()]);
    const shared = this.dispatchers.get(key);
    if (shared) {
      context.setDispatcher(shared);
      // The Agent client-node just made has opened nothing yet; closing it frees it at once.
      void fresh.close().catch(() => {});
    } else this.dispatchers.set(key, fresh);
  }
}

/** A connection-sharing copy of `kubeConfig` (the same clusters, users, contexts and current context). */
export function shareConnections(kubeConfig: KubeConfig): KubeConfig {
  if (kubeConfig instanceof ConnectionSharingKubeConfig) return kubeConfig;
  const shared = new ConnectionSharingKubeConfig();
  shared.loadFromOptions({
    clusters: kubeConfig.clusters,
    users: kubeConfig.users,
    contexts: kubeConfig.contexts,
    currentContext: kubeConfig.currentContext,
  });
  return shared;
}
